;;; eglot_followup.el --- drive agent-lsp from Emacs eglot, with no plugin  -*- lexical-binding: t -*-

;; Run: emacs --batch -l eglot_followup.el
;; A generic LSP editor: eglot starts `python -m agent_lsp`, opens a file,
;; runs the `agentLsp.followup' command through workspace/executeCommand and
;; waits until the agent's edit (a workspace/applyEdit) shows in the buffer.
;;
;; Inputs (environment):
;;   AGENT_LSP_PYTHON     the Python interpreter that has agent_lsp installed
;;   AGENT_LSP_WORKSPACE  the workspace folder
;;   AGENT_LSP_FILE       the file to open, relative to the workspace
;;   AGENT_LSP_SETTINGS   initializationOptions, as JSON
;;   AGENT_LSP_PROMPT     the followup text
;;   AGENT_LSP_EXPECT     text the buffer must contain at the end
;;   AGENT_LSP_EXPECT_MESSAGE  optional: a window/showMessage must contain this
;;                        (the server reports the final answer of a command's turn)
;;   AGENT_LSP_TIMEOUT    seconds to wait (default 30)
;;   AGENT_LSP_CODE_ACTION  optional: instead of the followup command, run the code
;;                        action with this title offered at the start of line 2
;;                        (the request eglot sends itself, with no diagnostics)
;;   AGENT_LSP_THEN_ACTION  optional: once the buffer shows AGENT_LSP_EXPECT, run the
;;                        code action with this title at the start of line 2 too, and
;;                        wait for AGENT_LSP_THEN_EXPECT in the buffer
;;   AGENT_LSP_DISK_BEFORE_ACTION  optional: the file on disk must hold exactly this
;;                        when AGENT_LSP_THEN_ACTION runs
;;   AGENT_LSP_TYPE_FIRST  optional: the user replaces the buffer's text with this (unsaved)
;;                        before the agent is asked
;;   AGENT_LSP_LOG_OUT    optional: a file that gets every window/logMessage text, one a line
;;   AGENT_LSP_QUESTIONS_OUT  optional: a file that gets the permission questions
;;                        asked (window/showMessageRequest), as JSON lines {message, actions}
;; Exit code 0 and a line "OK ..." on success; exit code 1 and "FAIL ..." otherwise.

(require 'package)
(package-initialize)                    ; Debian's elpa-eglot lives in the system package dirs
(require 'eglot)
(require 'python)
(require 'seq)

(setq eglot-confirm-server-initiated-edits nil ; apply the agent's edits without a y/n prompt
      eglot-sync-connect nil
      eglot-autoshutdown nil
      python-indent-guess-indent-offset nil)

(defvar agent-test-questions nil "Permission questions the server asked, newest first.")

;; A person at the keyboard would pick "Allow once" in the minibuffer; in
;; --batch the minibuffer reads stdin, so this answers for them.
(cl-defmethod eglot-handle-request
  (_server (_method (eql window/showMessageRequest)) &key message actions &allow-other-keys)
  (push message agent-test-questions)
  (let ((actions (append actions nil))
        (out (getenv "AGENT_LSP_QUESTIONS_OUT")))
    (when out
      (write-region (concat (json-encode `((message . ,message)
                                           (actions . ,(vconcat (mapcar (lambda (a) (plist-get a :title)) actions)))))
                            "\n")
                    nil out 'append 'silent))
    (or (seq-find (lambda (a) (equal (plist-get a :title) "Allow once")) actions)
        (car actions))))

(defvar agent-test-messages nil "window/showMessage texts, newest first.")

(cl-defmethod eglot-handle-notification
  (_server (_method (eql window/showMessage)) &key message &allow-other-keys)
  (push message agent-test-messages))

(defvar agent-test-notifications (make-hash-table :test #'equal)
  "How many notifications of each custom method arrived (eglot has no handler for them).")

(cl-defmethod eglot-handle-notification :before
  (_server method &rest params)
  (puthash (format "%s" method) (1+ (gethash (format "%s" method) agent-test-notifications 0))
           agent-test-notifications)
  (let ((out (getenv "AGENT_LSP_LOG_OUT")))
    (when (and out (eq method 'window/logMessage))
      (write-region (concat (plist-get params :message) "\n") nil out 'append 'silent))))

(defun agent-test-count (method)
  (gethash method agent-test-notifications 0))

(defun agent-test-finish (ok fmt &rest args)
  (princ (concat (if ok "OK " "FAIL ") (apply #'format fmt args) "\n"))
  (kill-emacs (if ok 0 1)))

(defun agent-test-wait (predicate seconds)
  "Process server output until PREDICATE is true or SECONDS pass."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall predicate)))

(defun agent-test-run-action (server title)
  "Run the code action TITLE offered at the start of line 2 (as eglot asks, no diagnostics)."
  (goto-char (point-min))
  (forward-line 1)
  (let* ((actions (eglot-code-actions (point)))
         (action (seq-find (lambda (a) (equal (plist-get a :title) title)) actions)))
    (unless action
      (agent-test-finish nil "no code action %S; offered %S" title
                         (mapcar (lambda (a) (plist-get a :title)) actions)))
    (let ((command (plist-get action :command)))
      (eglot-execute-command server (intern (plist-get command :command)) (plist-get command :arguments)))))

(let* ((python (getenv "AGENT_LSP_PYTHON"))
       (root (file-name-as-directory (expand-file-name (getenv "AGENT_LSP_WORKSPACE"))))
       (file (expand-file-name (getenv "AGENT_LSP_FILE") root))
       (settings (json-parse-string (or (getenv "AGENT_LSP_SETTINGS") "{}")
                                    :object-type 'plist :array-type 'array))
       (prompt (getenv "AGENT_LSP_PROMPT"))
       (expected (getenv "AGENT_LSP_EXPECT"))
       (expected-message (getenv "AGENT_LSP_EXPECT_MESSAGE"))
       (timeout (string-to-number (or (getenv "AGENT_LSP_TIMEOUT") "30")))
       (buffer (find-file-noselect file))
       server)
  (with-current-buffer buffer
    (eglot (list major-mode) (cons 'transient root) 'eglot-lsp-server
           (list python "-m" "agent_lsp" :initializationOptions settings)
           "python")
    (unless (agent-test-wait (lambda () (setq server (eglot-current-server))) timeout)
      (agent-test-finish nil "eglot did not connect to agent-lsp within %s s" timeout))
    ;; The buffer is managed once didOpen went out; then ask the agent.
    (agent-test-wait (lambda () (bound-and-true-p eglot--managed-mode)) timeout)
    (let ((typed (getenv "AGENT_LSP_TYPE_FIRST")))
      (when typed
        (erase-buffer)
        (insert typed)
        (eglot--signal-textDocument/didChange))) ; what eglot sends once the user pauses
    (let ((title (getenv "AGENT_LSP_CODE_ACTION")))
      (if (not title)
          (eglot-execute-command server 'agentLsp.followup (vector prompt))
        (agent-test-run-action server title)))
    (unless (agent-test-wait (lambda () (string-search expected (buffer-string))) timeout)
      (agent-test-finish nil "the buffer never showed %S; it is:\n%s" expected (buffer-string)))
    (when (and expected-message
               (not (agent-test-wait
                     (lambda () (seq-find (lambda (m) (string-search expected-message m)) agent-test-messages))
                     timeout)))
      (agent-test-finish nil "no window/showMessage with %S; got %S" expected-message agent-test-messages))
    (let ((then (getenv "AGENT_LSP_THEN_ACTION"))
          (then-expected (getenv "AGENT_LSP_THEN_EXPECT"))
          (disk (getenv "AGENT_LSP_DISK_BEFORE_ACTION")))
      (when then
        (when disk
          (let ((on-disk (with-temp-buffer (insert-file-contents file) (buffer-string))))
            (unless (equal on-disk disk)
              (agent-test-finish nil "before %S the file on disk is:\n%s" then on-disk))))
        (agent-test-run-action server then)
        (unless (agent-test-wait (lambda () (string-search then-expected (buffer-string))) timeout)
          (agent-test-finish nil "after %S the buffer never showed %S; it is:\n%s" then then-expected (buffer-string)))))
    (agent-test-finish t "emacs %s eglot: the agent's edit is in the buffer (permission questions: %d, messages: %d, session/event: %d, window/logMessage: %d)"
                       emacs-version (length agent-test-questions) (length agent-test-messages)
                       (agent-test-count "session/event") (agent-test-count "window/logMessage"))))
