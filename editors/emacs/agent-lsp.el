;;; agent-lsp.el --- the agent_lsp coding agent in Emacs, over eglot  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; Runs agent-lsp through its own eglot connection, next to whatever server
;; eglot runs for your buffers' major mode (eglot has one server per major
;; mode and project, so agent-lsp gets a mode of its own).  The connection
;; declares that it renders the agent's events: the conversation streams into
;; the project's chat buffer, `*agent: NAME*' (each project has its own
;; agent-lsp, session and chat: a command runs for the project of the buffer
;; it is called from).  The agent's edits arrive as ordinary
;; workspace/applyEdit and land in your buffers (undo works); its permission
;; questions are asked in the minibuffer, one key per answer (a key pressed
;; as the question appears answers nothing: `agent-lsp-permission-guard').
;; Its language questions (the problems an edit added, definitions, renames,
;; ...) are answered by the server eglot runs for the buffer's major mode
;; (agent-lsp-language.el), so the agent sees what you see.
;;
;;   M-x agent-lsp-ask                   send a message (starts the server)
;;   M-x agent-lsp-steer                 send into the running turn
;;   M-x agent-lsp-cancel                stop the running turn
;;   M-x agent-lsp-ask-about-selection   ask a question about the region
;;   M-x agent-lsp-attach-image          attach an image to the next message
;;   M-x agent-lsp-run-skill             run one of the project's skills
;;   M-x agent-lsp-new-session           start a new session
;;   M-x agent-lsp-resume                show an earlier session and go on in it
;;   M-x agent-lsp-queue                 the messages waiting for the agent (d removes one)
;;   M-x agent-lsp-mcp-status            the project's MCP servers
;;   M-x agent-lsp-review                the agent's changes waiting for review
;;                                       (k keep, u undo; edits.review = "review")
;;   M-x agent-lsp-review-keep / -undo   the change at point, in a file's buffer
;;
;; The agent reads files from disk: save your buffers before asking.  Its
;; edits are saved before its next tool runs, except in a buffer that holds
;; your own unsaved changes: that one is left unsaved, and the agent is told
;; that the file on disk is unchanged.

;;; Code:

(require 'eglot)
(require 'project)
(require 'seq)
(require 'subr-x)
(require 'agent-lsp-language)
(require 'agent-lsp-images)
(require 'agent-lsp-buffers)

(defgroup agent-lsp nil
  "The agent_lsp coding agent."
  :group 'tools)

(defcustom agent-lsp-server-command '("agent-lsp")
  "The command that starts the agent-lsp language server."
  :type '(repeat string))

(defcustom agent-lsp-initialization-options nil
  "Settings sent as initializationOptions, or nil.
A plist of the object docs/protocol.md describes under Settings."
  :type 'sexp)

(defclass agent-lsp-server (eglot-lsp-server) ()
  :documentation "An eglot connection to agent-lsp that renders its events.")

(cl-defmethod eglot-client-capabilities ((_server agent-lsp-server))
  (plist-put (cl-call-next-method) :experimental '(:agentLsp (:events t :languageQuery t :saveDocuments t :permissions t))))

;;; The agent's edits reach the disk

(defvar-local agent-lsp--holding nil
  "Non-nil when the agent's last edit met the user's unsaved changes here.
Such a buffer is left unsaved (saving would write the user's changes too).")

(defvar-local agent-lsp--edited-tick nil
  "The buffer's modification tick right after the agent's last edit.")

(defvar-local agent-lsp--loaded nil
  "Non-nil when this buffer was visited only to apply an agent edit.")

(defun agent-lsp--edited-files (edit)
  "The files a WorkspaceEdit EDIT changes."
  (append (mapcar (lambda (change) (eglot--uri-to-path (plist-get (plist-get change :textDocument) :uri)))
                  (seq-filter (lambda (change) (plist-get change :textDocument))
                              (plist-get edit :documentChanges)))
          (cl-loop for (uri _edits) on (plist-get edit :changes) by #'cddr
                   collect (eglot--uri-to-path (substring (symbol-name uri) 1)))))

(defun agent-lsp--users-changes-p (buffer)
  "Non-nil when BUFFER has unsaved changes of the user's (not only the agent's)."
  (with-current-buffer buffer
    (and (buffer-modified-p)
         (or agent-lsp--holding (not (eql (buffer-modified-tick) agent-lsp--edited-tick))))))

(cl-defmethod eglot-handle-request ((server agent-lsp-server) (_method (eql workspace/applyEdit))
                                    &key edit &allow-other-keys)
  "Apply the agent's EDIT to the buffers; the server then asks to save them.
A buffer that already had the user's unsaved changes is not saved.  The
edited buffers' text goes to the server (agent-lsp-buffers.el), and an edit
made for an older text than a buffer has is refused."
  (if-let ((stale (agent-lsp-buffers-stale server edit)))
      (list :applied :json-false :failureReason stale)
    (let* ((files (agent-lsp--edited-files edit))
           (before (mapcar (lambda (file)
                             (let ((buffer (find-buffer-visiting file)))
                               (cons buffer (and buffer (agent-lsp--users-changes-p buffer)))))
                           files)))
      ;; visited here, so that eglot does not ask before editing a file no buffer visits
      (dolist (file files)
        (when (file-exists-p file) (find-file-noselect file t)))
      (eglot--apply-workspace-edit edit eglot-confirm-server-initiated-edits)
      (cl-loop for file in files
               for (visited . modified) in before
               do (when-let ((buffer (find-buffer-visiting file)))
                    (with-current-buffer buffer
                      (setq agent-lsp--loaded (if visited agent-lsp--loaded t)
                            agent-lsp--holding modified
                            agent-lsp--edited-tick (buffer-modified-tick)))
                    (agent-lsp-buffers-open server buffer)))
      (agent-lsp-buffers-flush))
    '(:applied t)))

(cl-defmethod eglot-handle-request ((_server agent-lsp-server) (_method (eql agent/saveDocuments))
                                    &key uris &allow-other-keys)
  "Save the buffers of URIS, except those holding the user's unsaved changes.
The answer names those, so the agent knows the file on disk is unchanged."
  (let (unsaved)
    (seq-doseq (uri uris)
      (when-let ((buffer (find-buffer-visiting (eglot--uri-to-path uri))))
        (with-current-buffer buffer
          (cond (agent-lsp--holding (when (buffer-modified-p) (push uri unsaved)))
                ((buffer-modified-p)
                 (let ((inhibit-message t)) (save-buffer))
                 (when (and agent-lsp--loaded (not (get-buffer-window buffer t)))
                   (kill-buffer buffer)))))))
    (list :unsaved (vconcat (nreverse unsaved)))))

(cl-defmethod eglot-handle-request ((server agent-lsp-server) (_method (eql agent/languageQuery))
                                    &rest params)
  "The agent asks the language server eglot runs for a buffer.
See agent-lsp-language.el."
  (agent-lsp-language-answer server params))

(define-derived-mode agent-lsp-chat-mode special-mode "Agent"
  "The conversation with the agent: what you asked, its tools and answers."
  (setq-local truncate-lines nil)
  (visual-line-mode 1))

;;; Permission questions

(defcustom agent-lsp-permission-guard 0.6
  "Seconds after a permission question appears in which keys answer nothing.
A key typed for something else just as the question appears must not
approve what the user has not read."
  :type 'number)

(defconst agent-lsp--answers
  '(("once" ?a "allow once") ("session" ?s "allow for this session")
    ("always" ?A "always allow") ("deny" ?d "deny"))
  "The answers to a permission question, their keys and labels.")

(defun agent-lsp--permission-prompt (title detail diff why offered)
  "The question: TITLE, DETAIL, DIFF, WHY it always asks, the OFFERED keys."
  (concat (propertize "agent-lsp: " 'face 'warning) title
          (if (and detail (not (equal detail ""))) (concat " — " detail) "")
          (if why (concat "\n" why) "")
          (if diff (concat "\n" diff) "")
          "\n"
          (mapconcat (lambda (answer) (format "[%c] %s" (nth 1 answer) (nth 2 answer))) offered "  ")
          " "))

(defvar agent-lsp-question-functions nil
  "Functions called with a line when a question of the agent waits for the user.")

(defun agent-lsp--read-answer (prompt offered)
  "Read the key of one of the OFFERED answers with PROMPT.
Keys typed before it, or within `agent-lsp-permission-guard' seconds of
its appearing, are dropped."
  (discard-input)
  (let ((shown (float-time)) answer)
    (while (not answer)
      (let ((key (read-key prompt)))
        (when (>= (- (float-time) shown) agent-lsp-permission-guard)
          (setq answer (car (seq-find (lambda (a) (eql (nth 1 a) key)) offered))))))
    answer))

(cl-defmethod eglot-handle-request ((server agent-lsp-server) (_method (eql agent/permission))
                                    &key title detail diff asksEveryTime choices &allow-other-keys)
  "The agent asks before a risky action: one key per answer the server honours.
\\[keyboard-quit] denies."
  (let* ((choices (append choices nil))
         (offered (seq-filter (lambda (a) (or (equal (car a) "deny") (member (car a) choices)))
                              agent-lsp--answers))
         (prompt (agent-lsp--permission-prompt title detail diff asksEveryTime offered))
         (chat (agent-lsp--chat-of server)))
    (with-current-buffer chat (agent-lsp--line (propertize "? " 'face 'warning) title))
    (run-hook-with-args 'agent-lsp-question-functions (format "the agent asks: %s" title))
    (let ((answer (condition-case nil
                      (agent-lsp--read-answer prompt offered)
                    (quit "deny"))))
      (with-current-buffer chat
        (agent-lsp--line (propertize (format "  %s" (nth 2 (assoc answer agent-lsp--answers))) 'face 'shadow)))
      (list :answer answer))))

;;; The chat buffers: one per project

(defvar agent-lsp--chats (make-hash-table :test #'equal) "Project root -> its chat buffer.")

(defvar-local agent-lsp--project nil
  "In the chat buffer and the lists it opens: the project they belong to.")

(defvar-local agent-lsp--session nil
  "In a chat buffer: the id of the session it shows, once known.")

(defvar-local agent-lsp--streaming nil "Non-nil while an answer streams into this chat buffer.")

(defun agent-lsp--project ()
  "The project of the current buffer: a chat's own, or the one of its directory."
  (or agent-lsp--project (project-current) (cons 'transient default-directory)))

(defun agent-lsp--root (project)
  (file-name-as-directory (expand-file-name (project-root project))))

(defun agent-lsp-chat-buffer (&optional project)
  "The chat buffer of PROJECT (default: the current buffer's), made if needed."
  (let* ((project (or project (agent-lsp--project)))
         (root (agent-lsp--root project))
         (chat (gethash root agent-lsp--chats)))
    (if (buffer-live-p chat)
        chat
      (with-current-buffer (generate-new-buffer
                            (format "*agent: %s*" (file-name-nondirectory (directory-file-name root))))
        (agent-lsp-chat-mode)
        (setq default-directory root
              agent-lsp--project project)
        (puthash root (current-buffer) agent-lsp--chats)))))

(defun agent-lsp--chat-of (server)
  "The chat buffer of SERVER's project."
  (agent-lsp-chat-buffer (eglot--project server)))

(defun agent-lsp--list-name (what project)
  (format "*agent %s: %s*" what (file-name-nondirectory (directory-file-name (agent-lsp--root project)))))

(defun agent-lsp--list-buffer (what &optional mode)
  "The buffer listing WHAT (\"queue\", \"MCP\", ...) for the current project.
In MODE (default `special-mode')."
  (let* ((project (agent-lsp--project))
         (mode (or mode #'special-mode))
         (buffer (get-buffer-create (agent-lsp--list-name what project))))
    (with-current-buffer buffer
      (unless (eq major-mode mode) (funcall mode))
      (setq default-directory (agent-lsp--root project)
            agent-lsp--project project))
    buffer))

(defun agent-lsp--insert (&rest strings)
  "Append STRINGS to the chat buffer (current); windows at its end follow it."
  (let ((followers (seq-filter (lambda (w) (= (window-point w) (point-max)))
                               (get-buffer-window-list nil nil t)))
        (inhibit-read-only t))
    (save-excursion
      (goto-char (point-max))
      (apply #'insert strings))
    (dolist (w followers) (set-window-point w (point-max)))))

(defun agent-lsp--line (&rest strings)
  "Append STRINGS as a line of their own, ending a streaming answer first."
  (when agent-lsp--streaming
    (setq agent-lsp--streaming nil)
    (agent-lsp--insert "\n"))
  (apply #'agent-lsp--insert (append strings '("\n"))))

(defun agent-lsp--user-text (message)
  "What the user wrote in MESSAGE, without the attached context blocks and images."
  (mapconcat (lambda (block) (plist-get block :text))
             (seq-filter (lambda (block)
                           (and (equal (plist-get block :type) "text")
                                (not (string-prefix-p "<context>" (plist-get block :text)))))
                         (agent-lsp-images-text-blocks (plist-get message :content)))
             ""))

(defun agent-lsp--arguments (arguments)
  "A tool call's ARGUMENTS (a JSON object or its text) as one short line."
  (let* ((parsed (if (stringp arguments)
                     (or (ignore-errors (json-parse-string arguments :object-type 'plist)) arguments)
                   arguments))
         (values (if (and (consp parsed) (keywordp (car parsed)))
                     (cl-loop for (_key value) on parsed by #'cddr
                              collect (if (or (stringp value) (numberp value)) (format "%s" value) (json-encode value)))
                   (list (format "%s" (or parsed ""))))))
    (truncate-string-to-width (replace-regexp-in-string "[\n\t ]+" " " (string-join values " "))
                              120 nil nil "…")))

(defun agent-lsp--render (event)
  "Append one `session/event' EVENT to the chat buffer."
  (let ((data (plist-get event :data)))
    (pcase (plist-get event :type)
      ("user/message"
       (let* ((message (plist-get data :message))
              (note (plist-get message :note)))
         (cond ((member (plist-get message :source) '("runtime-context" "compaction")))
               ;; text meant for the model: the note says what the user did
               ((and note (equal (plist-get note :kind) "skill"))
                (agent-lsp--line (propertize "You: " 'face 'bold)
                                 (propertize (plist-get note :text) 'face 'font-lock-constant-face)))
               (note (agent-lsp--line (propertize (plist-get note :text) 'face 'shadow)))
               (t (agent-lsp--line (propertize (if (equal (plist-get message :delivery) "steer")
                                                   "You (steering): " "You: ")
                                               'face 'bold)
                                   (agent-lsp--user-text message))
                  (mapc #'agent-lsp-images-insert (agent-lsp-images-of (plist-get message :content)))))))
      ("assistant/chunk"
       (let ((chunk (plist-get data :chunk)))
         (when (equal (plist-get chunk :type) "text-delta")
           (unless agent-lsp--streaming
             (setq agent-lsp--streaming t)
             (agent-lsp--insert (propertize "Agent: " 'face 'bold)))
           (agent-lsp--insert (plist-get chunk :text)))))
      ("assistant/message" (when agent-lsp--streaming
                             (setq agent-lsp--streaming nil)
                             (agent-lsp--insert "\n")))
      ("tool/call"
       (agent-lsp--line "→ " (plist-get data :name) " " (agent-lsp--arguments (plist-get data :arguments))))
      ("tool/result"
       (let* ((meta (plist-get data :meta))
              (exit (plist-get meta :exitCode))
              (error (plist-get data :error))
              (failed (or error (eq (plist-get (plist-get data :message) :isError) t)
                          (and (integerp exit) (/= exit 0)))))
         (agent-lsp--line (if failed (propertize "  ✗ " 'face 'error) (propertize "  ✓ " 'face 'success))
                          (plist-get data :name)
                          (cond (error (concat " · " (plist-get error :message)))
                                ((and failed exit) (format " · exit %s" exit))
                                (t "")))))
      ("turn/end"
       (let* ((reason (plist-get data :reason))
              (kind (if (stringp reason) reason (plist-get reason :kind)))
              (error (and (listp reason) (plist-get reason :error))))
         (agent-lsp--line (propertize (format "— turn %s %s%s" (plist-get data :turn) kind
                                              (if error (format ": %s" (plist-get error :message)) ""))
                                      'face 'shadow))
         (agent-lsp--insert "\n"))))))

(defvar agent-lsp-event-functions nil
  "Functions called in the chat buffer with each live `session/event' event.
Not called for the events of a session shown again (`agent-lsp-resume').")

(cl-defmethod eglot-handle-notification ((server agent-lsp-server) (_method (eql session/event))
                                         &key sessionId events &allow-other-keys)
  (with-current-buffer (agent-lsp--chat-of server)
    (when (or (null agent-lsp--session) (equal sessionId agent-lsp--session))
      (setq agent-lsp--session sessionId)
      (seq-do #'agent-lsp--render events)
      (seq-doseq (event events)
        (run-hook-with-args 'agent-lsp-event-functions event)))))

(cl-defmethod eglot-handle-notification ((server agent-lsp-server) (_method (eql agent/status))
                                         &key status &allow-other-keys)
  (with-current-buffer (agent-lsp--chat-of server)
    (setq mode-line-process (and (equal status "running") " running"))
    (force-mode-line-update)))

(cl-defmethod eglot-handle-notification ((server agent-lsp-server) (_method (eql agent/error))
                                         &key error &allow-other-keys)
  (with-current-buffer (agent-lsp--chat-of server)
    (agent-lsp--line (propertize (format "! %s: %s" (plist-get error :code) (plist-get error :message))
                                 'face 'error))))

;;; The connection and the commands

(defun agent-lsp--server ()
  "The agent-lsp connection of this project, started when there is none."
  (let* ((project (agent-lsp--project))
         (live (lambda () (seq-find (lambda (s) (and (agent-lsp-server-p s) (jsonrpc-running-p s)))
                                    (gethash project eglot--servers-by-project)))))
    (or (funcall live)
        ;; From a buffer no server manages, so that eglot replaces none.
        (with-temp-buffer
          (setq default-directory (project-root project))
          (let ((eglot-sync-connect 30))
            (eglot '(agent-lsp-chat-mode) project 'agent-lsp-server
                   (append agent-lsp-server-command
                           (list :initializationOptions (or agent-lsp-initialization-options eglot--{})))
                   "agent"))
          (when-let ((server (funcall live)))
            ;; a review read back from the logs waits in their unsaved text
            (agent-lsp-buffers-adopt server (project-root project))
            server))
        (user-error "agent-lsp did not start: see M-x eglot-events-buffer"))))

(defun agent-lsp--command (command &optional argument)
  "Run agent-lsp's COMMAND with ARGUMENT (a function of the chat's session).
In the project's chat buffer; the session the answer names becomes its session."
  (let ((server (agent-lsp--server)))
    (agent-lsp-buffers-flush)
    (with-current-buffer (agent-lsp--chat-of server)
      (let* ((argument (if (functionp argument) (funcall argument) argument))
             (result (eglot-execute-command server command (if argument (vector argument) []))))
        (when-let ((session (and (listp result) (plist-get result :sessionId))))
          (setq agent-lsp--session session))
        result))))

(defun agent-lsp--message (content)
  "The followup/steer argument for CONTENT (text, blocks or a plist): a
function of the chat's session."
  (let ((content (if (vectorp content) (list :content content) content)))
    (lambda ()
      (if agent-lsp--session
          (if (stringp content)
              (list :content content :sessionId agent-lsp--session)
            (plist-put (copy-sequence content) :sessionId agent-lsp--session))
        content))))

(defun agent-lsp--request (method params)
  "Send METHOD with PARAMS to this project's agent-lsp and return the result."
  (let ((server (agent-lsp--server)))
    (agent-lsp-buffers-flush)
    (jsonrpc-request server method params)))

(defun agent-lsp--workspace-uri ()
  (eglot--path-to-uri (expand-file-name (project-root (eglot--project (agent-lsp--server))))))

(defun agent-lsp--current-session ()
  (or (buffer-local-value 'agent-lsp--session (agent-lsp-chat-buffer))
      (user-error "No session yet: ask the agent something first")))

(defun agent-lsp-show ()
  "Show this project's chat buffer."
  (interactive)
  (display-buffer (agent-lsp-chat-buffer)))

;;;###autoload
(defun agent-lsp-ask (text)
  "Send TEXT to the agent of this project.
It starts a turn, or is queued after the running one."
  (interactive (list (read-string "Ask the agent: ")))
  (agent-lsp-images-send
   (lambda () (agent-lsp--command 'agentLsp.followup (agent-lsp--message (agent-lsp-images-content text)))))
  (agent-lsp-show))

;;;###autoload
(defun agent-lsp-steer (text)
  "Send TEXT into the running turn: the agent reads it at its next step."
  (interactive (list (read-string "Steer the agent: ")))
  (agent-lsp-images-send
   (lambda () (agent-lsp--command 'agentLsp.steer (agent-lsp--message (agent-lsp-images-content text))))))

;;;###autoload
(defun agent-lsp-cancel ()
  "Stop the agent's running turn."
  (interactive)
  (agent-lsp--command 'agentLsp.cancel (lambda () agent-lsp--session)))

;;;###autoload
(defun agent-lsp-run-skill (name &optional arguments)
  "Run the skill NAME of this project, with ARGUMENTS (what you add to it).
The chat shows /NAME; the agent reads the skill's instructions."
  (interactive (list (read-string "Skill: ") (read-string "Add (optional): ")))
  (agent-lsp--command 'agentLsp.runSkill
                      (if (and arguments (not (string-empty-p arguments)))
                          (list :name name :arguments arguments)
                        name))
  (agent-lsp-show))

;;;###autoload
(defun agent-lsp-ask-about-selection (beg end question)
  "Ask QUESTION about the code between BEG and END; the code goes with it."
  (interactive (if (use-region-p)
                   (list (region-beginning) (region-end) (read-string "Ask the agent about the selection: "))
                 (user-error "Select the code to ask about first")))
  (let ((context (list :kind "selection"
                       :uri (eglot--path-to-uri (or buffer-file-name (user-error "This buffer has no file")))
                       :range (list :start (eglot--pos-to-lsp-position beg) :end (eglot--pos-to-lsp-position end))
                       :text (buffer-substring-no-properties beg end))))
    (agent-lsp--command 'agentLsp.followup (agent-lsp--message (list :content question :context (vector context))))
    (agent-lsp-show)))

(provide 'agent-lsp)
(require 'agent-lsp-sessions)
(require 'agent-lsp-review)
(require 'agent-lsp-attention)
;;; agent-lsp.el ends here
