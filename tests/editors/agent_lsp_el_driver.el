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
;;                          ["wait-mcp", TEXT]  (M-x agent-lsp-mcp-status again until it shows TEXT)
;;                          ["queue-remove", TEXT]  (d on the queued message's line with TEXT)
;;                          ["resume", TEXT]  (picks the session whose line contains TEXT)
;;                          ["wait-buffer", NAME, TEXT]  (until buffer NAME contains TEXT)
;;                          ["skill", NAME, ARGUMENTS]  (run the project's skill NAME)
;;                          ["type", FILE, TEXT]  (the user types TEXT at the end of FILE's
;;                             buffer, visiting it, and does not save)
;;                          ["type-at", FILE, LINE, TEXT]  (the same, at the start of LINE)
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
;;                          ["review"]  (M-x agent-lsp-review)
;;                          ["review-at", LINE, ACTION]  (in the open file, at LINE (1-based),
;;                             M-x agent-lsp-review-keep or -undo: ACTION "keep" or "undo")
;;                          ["review-list", TEXT, KEY]  (in the review list, on the line
;;                             containing TEXT, press KEY: "k", "u", "K" or "U")
;;                          ["wait-drawn", TEXT]  (until the open file's buffer shows TEXT
;;                             drawn above its lines: a deleted or replaced line of a change)
;;                          ["visit", FILE]  (the following steps run in FILE's buffer, FILE
;;                             relative to the workspace or absolute: another project)
;;                          ["away"]  (the user looks away: no Emacs frame has the focus)
;;                          ["set", VARIABLE, VALUE]  (the user's setting of a variable)
;;                          ["touch", PATH]  (writes the file PATH: tells the test the steps got here)
;;   AGENT_LSP_OUT        file that gets the chat buffer's text at the end (of the project
;;                        of the buffer the steps ended in; every chat buffer's text in
;;                        AGENT_LSP_OUT.all, each after a line "=== NAME")
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

(defvar driver-attention nil "The lines agent-lsp-attention-function was called with, newest first.")

(defun driver-chat ()
  "The chat buffer of the current buffer's project."
  (agent-lsp-chat-buffer))

(defun driver-finish (ok fmt &rest args)
  (let ((out (getenv "AGENT_LSP_OUT")))
    (when out
      (with-current-buffer (driver-chat)
        (write-region (point-min) (point-max) out nil 'silent))
      (with-temp-file (concat out ".all")
        (maphash (lambda (_root chat)
                   (insert "=== " (buffer-name chat) "\n" (with-current-buffer chat (buffer-string))))
                 agent-lsp--chats))))
  (princ (concat (if ok "OK " "FAIL ") (apply #'format fmt args)
                 (format "\nworkspace/applyEdit: %d\n" driver-applied-edits)
                 (format "prompts: %S\n" driver-prompts)
                 (format "errors: %S\n" driver-errors)
                 (format "attention: %S\n" driver-attention)))
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

(defvar driver-file nil "The buffer the steps run in after a \"visit\" step.")

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
    (`("wait" ,text) (driver-wait (driver-chat) text timeout))
    (`("wait-file" ,text) (driver-wait file text timeout))
    (`("visit" ,name)
     (setq driver-file (find-file-noselect (expand-file-name name root)))
     (set-buffer driver-file))
    (`("set" ,variable ,value) (set (intern variable) value))
    (`("touch" ,path) (write-region "" nil path nil 'silent))
    (`("away")
     (setq agent-lsp-attention-away-function #'always
           agent-lsp-attention-function (lambda (line) (push line driver-attention))))
    (`("review") (agent-lsp-review))
    (`("review-at" ,line ,action)
     (goto-char (point-min))
     (forward-line (1- line))
     (if (equal action "undo") (agent-lsp-review-undo) (agent-lsp-review-keep)))
    (`("review-list" ,text ,key)
     (with-current-buffer (get-buffer (agent-lsp--list-name "review" (agent-lsp--project)))
       (goto-char (point-min))
       (search-forward text)
       (call-interactively (lookup-key agent-lsp-review-mode-map (kbd key)))))
    (`("wait-drawn" ,text)
     (let ((deadline (+ (float-time) timeout))
           (drawn (lambda () (seq-find (lambda (o) (string-search text (or (overlay-get o 'before-string) "")))
                                       (with-current-buffer file (overlays-in (point-min) (point-max)))))))
       (while (and (not (funcall drawn)) (< (float-time) deadline))
         (accept-process-output nil 0.05))
       (unless (funcall drawn) (driver-finish nil "%s never drew %S" (buffer-name file) text))))
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
                     (and (not (with-current-buffer (agent-lsp--list-name "queue" (agent-lsp--project))
                                 (save-excursion (goto-char (point-min)) (search-forward text nil t))))
                          (< (float-time) deadline)))
         (accept-process-output nil 0.1))
       (driver-wait (get-buffer (agent-lsp--list-name "queue" (agent-lsp--project))) text 0)))
    (`("queue-remove" ,text)
     (with-current-buffer (agent-lsp--list-name "queue" (agent-lsp--project))
       (goto-char (point-min))
       (search-forward text)
       (agent-lsp-queue-remove)))
    (`("mcp-status") (agent-lsp-mcp-status))
    (`("wait-mcp" ,text)
     (let ((deadline (+ (float-time) timeout))
           (name (agent-lsp--list-name "MCP" (agent-lsp--project))))
       (while (progn (agent-lsp-mcp-status)
                     (and (not (with-current-buffer name
                                 (save-excursion (goto-char (point-min)) (search-forward text nil t))))
                          (< (float-time) deadline)))
         (accept-process-output nil 0.2))
       (driver-wait (get-buffer name) text 0)))
    (`("wait-buffer" ,name ,text)
     (driver-wait (or (get-buffer name) (driver-finish nil "no buffer %s" name)) text timeout))
    (`("skill" ,name ,arguments) (agent-lsp-run-skill name arguments))
    (`("type" ,name ,text)
     (with-current-buffer (find-file-noselect (expand-file-name name root))
       (goto-char (point-max))
       (insert text)))
    (`("type-at" ,name ,line ,text)
     (with-current-buffer (find-file-noselect (expand-file-name name root))
       (goto-char (point-min))
       (forward-line (1- line))
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
          (driver-step step root (or driver-file file) timeout))
      (error (driver-finish nil "step failed: %S" err)))
    (driver-finish t "emacs %s: window/showMessage: %S" emacs-version driver-messages)))
