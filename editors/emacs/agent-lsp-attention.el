;;; agent-lsp-attention.el --- tell a user who looked away  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; When the agent's turn ends, or a question waits for you, while no Emacs
;; frame has the focus, `agent-lsp-attention-function' is called with a
;; line saying so: by default a desktop notification (D-Bus, where Emacs
;; has it) and a bell; `agent-lsp-attention-command' runs a program of
;; yours instead (e.g. '("notify-send" "agent-lsp")), the line its last
;; argument.  Set `agent-lsp-attention-function' to nil for nothing.

;;; Code:

(require 'agent-lsp)
(require 'seq)

(declare-function notifications-notify "notifications" (&rest params))

(defcustom agent-lsp-attention-function #'agent-lsp-attention-notify
  "Called with a line when a turn ends or a question waits while you are away.
nil: never."
  :type '(choice (const :tag "Nothing" nil) function)
  :group 'agent-lsp)

(defcustom agent-lsp-attention-command nil
  "A program and its first arguments that tell you, the line appended.
nil: a desktop notification."
  :type '(repeat string)
  :group 'agent-lsp)

(defvar agent-lsp-attention-away-function #'agent-lsp-attention-away-p
  "Non-nil when the user is away from Emacs (no frame has the focus).")

(defun agent-lsp-attention-away-p ()
  "Non-nil when a frame says it lost the focus and none says it has it."
  (let ((states (mapcar #'frame-focus-state (frame-list))))
    (and (not noninteractive) (memq nil states) (not (memq t states)))))

(defun agent-lsp-attention-notify (line)
  "Tell the user LINE: with `agent-lsp-attention-command', or a notification."
  (cond (agent-lsp-attention-command
         (apply #'start-process "agent-lsp-attention" nil (append agent-lsp-attention-command (list line))))
        ((and (getenv "DBUS_SESSION_BUS_ADDRESS") (ignore-errors (require 'notifications nil t)))
         (ignore-errors (notifications-notify :title "agent-lsp" :body line))))
  (ding t)
  (message "agent-lsp: %s" line))

(defun agent-lsp-attention--call (line)
  (when (and agent-lsp-attention-function (funcall agent-lsp-attention-away-function))
    (funcall agent-lsp-attention-function line)))

(defun agent-lsp-attention--event (event)
  "After a live EVENT in a chat buffer: a turn that ended."
  (when (equal (plist-get event :type) "turn/end")
    (let* ((reason (plist-get (plist-get event :data) :reason))
           (kind (if (stringp reason) reason (plist-get reason :kind))))
      (agent-lsp-attention--call (format "the agent's turn %s (%s)" kind (buffer-name))))))

(add-hook 'agent-lsp-event-functions #'agent-lsp-attention--event)
(add-hook 'agent-lsp-question-functions #'agent-lsp-attention--call)

(provide 'agent-lsp-attention)
;;; agent-lsp-attention.el ends here
