;;; agent-lsp-held.el --- follow a session another window has open  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; A session another editor window (another agent-lsp on the same folder)
;; has open is read-only here: `agent-lsp-resume' shows it as a snapshot
;; of its log, with a line saying when it was read and whether a turn runs
;; there.  While the chat shows it, its log is read on from where the
;; snapshot ended: every 3 s while a turn runs there, every 15 s otherwise
;; (`agent-lsp-held-running-seconds', `agent-lsp-held-idle-seconds').  What
;; that turn adds is drawn as it comes; once the other window lets the
;; session go, a line says it is yours to continue.

;;; Code:

(require 'agent-lsp)

(defcustom agent-lsp-held-running-seconds 3
  "Seconds between reads of a held session's log while a turn runs there."
  :type 'number :group 'agent-lsp)

(defcustom agent-lsp-held-idle-seconds 15
  "Seconds between reads of a held session's log while no turn runs there."
  :type 'number :group 'agent-lsp)

(defvar-local agent-lsp-held--timer nil "In a chat buffer: the timer following its held session.")
(defvar-local agent-lsp-held--next nil "In a chat buffer: the seq its held session's log is read on from.")
(defvar-local agent-lsp-held--running nil "In a chat buffer: non-nil while a turn runs in the holding window.")

(defun agent-lsp-held--line (pid running)
  (propertize (format "— a snapshot as of %s of a session open in another window%s%s: read-only here \
(M-x agent-lsp-new-session to go on)"
                      (format-time-string "%H:%M:%S")
                      (if (and pid (> pid 0)) (format " (pid %d)" pid) "")
                      (if running ", where a turn is running; it is followed as it goes" ""))
              'face 'shadow))

(defun agent-lsp-held--stop ()
  (when (timerp agent-lsp-held--timer) (cancel-timer agent-lsp-held--timer))
  (setq agent-lsp-held--timer nil))

(defun agent-lsp-held--read (chat session-id)
  "Read on the held SESSION-ID's log into CHAT (a chat buffer)."
  (when (buffer-live-p chat)
    (with-current-buffer chat
      (if (not (equal agent-lsp--session session-id))
          (agent-lsp-held--stop)
        (let ((page (ignore-errors
                      (agent-lsp--request :agent/session/replay
                                          (list :sessionId session-id :seq agent-lsp-held--next :limit 200)))))
          (when page
            (seq-do #'agent-lsp--render (plist-get page :events))
            (setq agent-lsp-held--next (plist-get page :nextSeq))
            (let ((running (equal (plist-get page :status) "running")))
              (cond ((null (plist-get page :heldByPid))
                     (agent-lsp-held--stop)
                     (agent-lsp--line (propertize "— the other window let this session go: yours to continue"
                                                  'face 'shadow)))
                    ((not (eq running agent-lsp-held--running))
                     (setq agent-lsp-held--running running)
                     (agent-lsp-held--schedule chat session-id))))))))))

(defun agent-lsp-held--schedule (chat session-id)
  (with-current-buffer chat
    (agent-lsp-held--stop)
    (let ((every (if agent-lsp-held--running agent-lsp-held-running-seconds agent-lsp-held-idle-seconds)))
      (setq agent-lsp-held--timer (run-with-timer every every #'agent-lsp-held--read chat session-id)))))

(defun agent-lsp-held-follow (session-id loaded)
  "In the chat buffer: say SESSION-ID is held elsewhere, and follow it.
LOADED is its `agent/session/load' answer."
  (agent-lsp-held--stop)
  (when-let ((pid (plist-get loaded :heldByPid)))
    (let* ((events (plist-get loaded :events))
           (last (and (> (length events) 0) (aref events (1- (length events))))))
      (setq agent-lsp-held--running (equal (plist-get loaded :status) "running")
            agent-lsp-held--next (if last (1+ (or (plist-get last :lastSeq) (plist-get last :seq))) 0))
      (agent-lsp--line (agent-lsp-held--line pid agent-lsp-held--running))
      (agent-lsp-held--schedule (current-buffer) session-id))))

(provide 'agent-lsp-held)
;;; agent-lsp-held.el ends here
