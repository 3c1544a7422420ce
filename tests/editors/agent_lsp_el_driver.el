;;; agent_lsp_el_driver.el --- drive editors/emacs/agent-lsp.el in Emacs batch  -*- lexical-binding: t -*-

;; Run: emacs --batch -l agent_lsp_el_driver.el
;; Loads the package, opens a file of the workspace and plays a list of
;; steps a user would do with its commands, then writes the *agent* buffer.
;;
;; Inputs (environment):
;;   AGENT_LSP_PACKAGE    path of agent-lsp.el
;;   AGENT_LSP_PYTHON     the Python interpreter that has agent_lsp installed
;;   AGENT_LSP_WORKSPACE  the workspace folder
;;   AGENT_LSP_FILE       the file to open, relative to the workspace
;;   AGENT_LSP_SETTINGS   initializationOptions, as JSON
;;   AGENT_LSP_STEPS      JSON list of steps, each a list:
;;                          ["ask", TEXT]  ["steer", TEXT]  ["cancel"]
;;                          ["ask-selection", LINE, QUESTION]  (the whole LINE, 1-based, selected)
;;                          ["wait", TEXT]  (until the *agent* buffer contains TEXT)
;;                          ["wait-file", TEXT]  (until the open file's buffer contains TEXT)
;;                          ["wait-visited", FILE, TEXT]  (until the buffer visiting FILE,
;;                             relative to the workspace, contains TEXT)
;;                          ["new-session"]  ["queue"]  ["mcp-status"]
;;                          ["wait-queued", TEXT]  (M-x agent-lsp-queue again until it lists TEXT)
;;                          ["queue-remove", TEXT]  (d on the queued message's line with TEXT)
;;                          ["resume", TEXT]  (picks the session whose line contains TEXT)
;;                          ["wait-buffer", NAME, TEXT]  (until buffer NAME contains TEXT)
;;                          ["skill", NAME, ARGUMENTS]  (run the project's skill NAME)
;;                          ["type", FILE, TEXT]  (the user types TEXT at the end of FILE's
;;                             buffer, visiting it, and does not save)
;;                          ["keys", [KEY, SECONDS]...]  (the keys the user presses at the
;;                             next questions: each KEY, a one-character string, SECONDS after
;;                             the question asks for a key)
;;                          ["start-server", COMMAND...]  (eglot runs COMMAND as the open
;;                             file's language server, for its major mode)
;;                          ["wait-reported"]  (until that server published diagnostics)
;;                          ["attach", FILE]  (M-x agent-lsp-attach-image FILE)
;;                          ["clear-attachments"]
;;                          ["graphical"]  (from now on the frame shows images: this batch
;;                             Emacs has no image support, so an image inserted shows as
;;                             "<image TYPE, N bytes>")
;;                          ["refused", STEP]  (STEP signals an error, which the user reads:
;;                             its message is reported under "errors:")
;;   AGENT_LSP_OUT        file that gets the *agent* buffer's text at the end
;;   AGENT_LSP_TIMEOUT    seconds each wait may take (default 30)
;; Exit code 0 and "OK ..." on success (with how many workspace/applyEdit
;; agent-lsp sent); 1 and "FAIL ..." otherwise.

(require 'package)
(package-initialize)
(require 'python)
(add-to-list 'load-path (file-name-directory (getenv "AGENT_LSP_PACKAGE")))
(load (getenv "AGENT_LSP_PACKAGE") nil t)

(setq eglot-confirm-server-initiated-edits nil ; apply the agent's edits without a y/n prompt
      python-indent-guess-indent-offset nil)

(defvar driver-messages nil "window/showMessage texts, newest first.")
(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql window/showMessage)) &key message &allow-other-keys)
  (push message driver-messages))

(defun driver-yes (prompt)
  "The user answers eglot's y/n question PROMPT (an edit of files not visited) with yes."
  (princ (concat prompt "y\n"))
  t)
(advice-add 'y-or-n-p :override #'driver-yes)

(defvar driver-keys nil "Keys the user will press, as (CHAR . SECONDS-BEFORE), in order.")
(defvar driver-prompts nil "The prompts keys were read with, newest first.")
(defun driver-read-key (&optional prompt &rest _)
  "The user presses the next of `driver-keys' (after its delay: the user's own time)."
  (push prompt driver-prompts)
  (let ((next (or (pop driver-keys) (driver-finish nil "a question asks for a key nobody presses: %s" prompt))))
    (when (> (cdr next) 0) (sleep-for (cdr next)))
    (car next)))
(advice-add 'read-key :override #'driver-read-key)

(defvar driver-choice nil "What the next completing-read picks: the candidate containing it.")
(defun driver-completing-read (prompt collection &rest _)
  (let ((names (all-completions "" collection)))
    (or (seq-find (lambda (name) (string-search driver-choice name)) names)
        (driver-finish nil "%s offers no %S among %S" prompt driver-choice names))))

(defvar driver-applied-edits 0 "workspace/applyEdit requests agent-lsp sent.")
(defvar driver-errors nil "The messages of the errors the \"refused\" steps signalled, in order.")
(cl-defmethod eglot-handle-request :before
  ((_server agent-lsp-server) (_method (eql workspace/applyEdit)) &rest _)
  (cl-incf driver-applied-edits))

(defun driver-start-server (command)
  "Start COMMAND with eglot as the current buffer's language server."
  (let ((eglot-sync-connect 60))
    (eglot (list major-mode) (eglot--current-project) 'eglot-lsp-server command "python"))
  (unless (eglot-current-server)
    (driver-finish nil "eglot did not start %S" command)))

(defun driver-wait-reported (seconds)
  (let ((server (eglot-current-server))
        (deadline (+ (float-time) seconds)))
    (while (and (not (gethash server agent-lsp-language--reports)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (gethash server agent-lsp-language--reports)
      (driver-finish nil "%s never published diagnostics" (jsonrpc-name server)))))

(defun driver-finish (ok fmt &rest args)
  (let ((out (getenv "AGENT_LSP_OUT")))
    (when (and out (get-buffer "*agent*"))
      (with-current-buffer "*agent*"
        (write-region (point-min) (point-max) out nil 'silent))))
  (princ (concat (if ok "OK " "FAIL ") (apply #'format fmt args)
                 (format "\nworkspace/applyEdit: %d\n" driver-applied-edits)
                 (format "prompts: %S\n" driver-prompts)
                 (format "errors: %S\n" driver-errors)))
  (kill-emacs (if ok 0 1)))

(defun driver-wait (buffer text seconds)
  (let ((deadline (+ (float-time) seconds))
        (found (lambda () (with-current-buffer buffer
                            (save-excursion (goto-char (point-min)) (search-forward text nil t))))))
    (while (and (not (funcall found)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall found)
        (driver-finish nil "%s never showed %S; it is:\n%s" (buffer-name buffer) text
                       (with-current-buffer buffer (buffer-string))))))

(defun driver-play (step root file timeout)
  "Play one of the user's STEPs in the buffer of FILE, the workspace being ROOT."
  (pcase step
    (`("ask" ,text) (agent-lsp-ask text))
    (`("steer" ,text) (agent-lsp-steer text))
    (`("cancel") (agent-lsp-cancel))
    (`("ask-selection" ,line ,question)
     (goto-char (point-min))
     (forward-line (1- line))
     (agent-lsp-ask-about-selection (line-beginning-position) (line-end-position) question))
    (`("wait" ,text) (driver-wait (get-buffer "*agent*") text timeout))
    (`("wait-file" ,text) (driver-wait file text timeout))
    (`("wait-visited" ,name ,text)
     (driver-wait (or (find-buffer-visiting (expand-file-name name root))
                      (driver-finish nil "%s is not visited" name))
                  text timeout))
    (`("new-session") (agent-lsp-new-session))
    (`("resume" ,text)
     (let ((driver-choice text))
       (advice-add 'completing-read :override #'driver-completing-read)
       (unwind-protect (call-interactively #'agent-lsp-resume)
         (advice-remove 'completing-read #'driver-completing-read))))
    (`("queue") (agent-lsp-queue))
    (`("wait-queued" ,text)
     (let ((deadline (+ (float-time) timeout)))
       (while (progn (agent-lsp-queue)
                     (and (not (with-current-buffer "*agent queue*"
                                 (save-excursion (goto-char (point-min)) (search-forward text nil t))))
                          (< (float-time) deadline)))
         (accept-process-output nil 0.1))
       (driver-wait (get-buffer "*agent queue*") text 0)))
    (`("queue-remove" ,text)
     (with-current-buffer "*agent queue*"
       (goto-char (point-min))
       (search-forward text)
       (agent-lsp-queue-remove)))
    (`("mcp-status") (agent-lsp-mcp-status))
    (`("wait-buffer" ,name ,text)
     (driver-wait (or (get-buffer name) (driver-finish nil "no buffer %s" name)) text timeout))
    (`("skill" ,name ,arguments) (agent-lsp-run-skill name arguments))
    (`("type" ,name ,text)
     (with-current-buffer (find-file-noselect (expand-file-name name root))
       (goto-char (point-max))
       (insert text)))
    (`("keys" . ,keys)
     (setq driver-keys (mapcar (lambda (k) (cons (aref (car k) 0) (cadr k))) keys)))
    (`("start-server" . ,command) (driver-start-server command))
    (`("wait-reported") (driver-wait-reported timeout))
    (_ (driver-finish nil "unknown step %S" step))))

(defun driver-step (step root file timeout)
  "Play one STEP (see the commentary) in the buffer of FILE, the workspace being ROOT."
  (pcase step
    (`("refused" ,inner)
     (condition-case err
         (progn (driver-step inner root file timeout)
                (driver-finish nil "%S was not refused" inner))
       (error (setq driver-errors (append driver-errors (list (error-message-string err)))))))
    (`("attach" ,name) (agent-lsp-attach-image name))
    (`("clear-attachments") (agent-lsp-clear-attachments))
    (`("graphical")
     (advice-add 'display-graphic-p :override (lambda (&rest _) t))
     (advice-add 'image-type-available-p :override (lambda (&rest _) t))
     (advice-add 'create-image :override (lambda (data type &rest _) (list 'image :type type :data data)))
     (advice-add 'insert-image :override
                 (lambda (image &rest _)
                   (insert (format "<image %s, %d bytes>" (plist-get (cdr image) :type)
                                   (length (plist-get (cdr image) :data)))))))
    (_ (driver-play step root file timeout))))

(let* ((root (file-name-as-directory (expand-file-name (getenv "AGENT_LSP_WORKSPACE"))))
       (file (find-file-noselect (expand-file-name (getenv "AGENT_LSP_FILE") root)))
       (timeout (string-to-number (or (getenv "AGENT_LSP_TIMEOUT") "30")))
       (steps (json-parse-string (getenv "AGENT_LSP_STEPS") :array-type 'list)))
  (setq agent-lsp-server-command (list (getenv "AGENT_LSP_PYTHON") "-m" "agent_lsp")
        agent-lsp-initialization-options
        (json-parse-string (or (getenv "AGENT_LSP_SETTINGS") "{}") :object-type 'plist :array-type 'array
                           :false-object :json-false))
  (with-current-buffer file
    (setq default-directory root)
    (condition-case err
        (dolist (step steps)
          (driver-step step root file timeout))
      (error (driver-finish nil "step failed: %S" err)))
    (driver-finish t "emacs %s: window/showMessage: %S" emacs-version driver-messages)))
