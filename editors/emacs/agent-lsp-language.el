;;; agent-lsp-language.el --- the agent asks the language server eglot runs for a buffer  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages

;;; Commentary:

;; Answers agent-lsp's `agent/languageQuery' (docs/protocol.md, "Language
;; queries") with the language server eglot runs for the document's buffer,
;; the one of its major mode, never with agent-lsp's own connection: the
;; agent's `language' tool and the problems its edits report then come from
;; your server, with your settings, on your live buffers.
;;
;; Diagnostics are taken as each server publishes them (LSP's own JSON, with
;; the document version the report is for), so an answer can wait until the
;; buffer's server has reported on the buffer's current text.  jsonrpc
;; answers a request with its handler's value, so the wait happens in the
;; handler, bounded by the question's timeoutMs: it reads only that server's
;; output (agent-lsp's own stays queued until the answer is sent).
;;
;; The other queries are sent to that server as the LSP requests they name,
;; and its result goes back unchanged (a rename's WorkspaceEdit is not
;; applied here: the agent applies it as one edit).

;;; Code:

(require 'eglot)
(require 'jsonrpc)
(require 'cl-lib)
(require 'seq)
(require 'subr-x)

(defvar agent-lsp-language--reports (make-hash-table :test #'eq :weakness 'key)
  "Each server's last diagnostics report of each file.
A table server -> (table file -> (URI VERSION TICK DIAGNOSTICS)).")

(defvar agent-lsp-language--tick 0 "Counts the diagnostics reports received.")

(defconst agent-lsp-language--requests
  '(("definition" . :textDocument/definition)
    ("references" . :textDocument/references)
    ("hover" . :textDocument/hover)
    ("documentSymbols" . :textDocument/documentSymbol)
    ("workspaceSymbols" . :workspace/symbol)
    ("rename" . :textDocument/rename)
    ("codeActions" . :textDocument/codeAction))
  "The LSP request each query kind is answered with.")

(cl-defmethod eglot-handle-notification :before
  ((server eglot-lsp-server) (_method (eql textDocument/publishDiagnostics))
   &key uri version diagnostics &allow-other-keys)
  "Note SERVER's report of URI with its VERSION before eglot shows it."
  (let ((files (or (gethash server agent-lsp-language--reports)
                   (puthash server (make-hash-table :test #'equal) agent-lsp-language--reports))))
    (puthash (expand-file-name (eglot--uri-to-path uri))
             (list uri version (cl-incf agent-lsp-language--tick) diagnostics)
             files)))

;;; Which servers

(defun agent-lsp-language--encoding (server)
  (or (plist-get (eglot--capabilities server) :positionEncoding) "utf-16"))

(defun agent-lsp-language--fits (agent server)
  "Whether SERVER may answer AGENT.
It must be a live language server, not agent-lsp itself, whose positions are
in AGENT's encoding (they pass through unconverted)."
  (and (not (eq (eieio-object-class server) (eieio-object-class agent)))
       (jsonrpc-running-p server)
       (equal (agent-lsp-language--encoding server) (agent-lsp-language--encoding agent))))

(defun agent-lsp-language--everyone (agent)
  "Every language server eglot runs that may answer AGENT."
  (let (servers)
    (maphash (lambda (_project list)
               (dolist (server list)
                 (when (agent-lsp-language--fits agent server) (push server servers))))
             eglot--servers-by-project)
    (nreverse servers)))

(defun agent-lsp-language--buffer (uri)
  "The buffer of URI, visited unseen if it was not (so its server opens it)."
  (let ((file (expand-file-name (eglot--uri-to-path uri))))
    (or (find-buffer-visiting file)
        (and (file-exists-p file)
             ;; eglot binds this to agent-lsp's connection while it handles
             ;; agent-lsp's request: the new buffer must find its own server.
             (let ((eglot--cached-server nil)
                   (inhibit-message t))
               (find-file-noselect file t))))))

(defun agent-lsp-language--server-of (agent buffer)
  "The server eglot runs for BUFFER that may answer AGENT, or nil."
  (seq-find (lambda (server) (memq buffer (eglot--managed-buffers server)))
            (agent-lsp-language--everyone agent)))

(defun agent-lsp-language--name (server)
  (or (plist-get (eglot--server-info server) :name)
      (when-let ((command (process-command (jsonrpc--process server))))
        (file-name-nondirectory (car command)))
      (jsonrpc-name server)))

(defun agent-lsp-language--flush (buffer)
  "Send BUFFER's changes to its server now rather than when Emacs is idle."
  (with-current-buffer buffer
    (when (fboundp 'eglot--signal-textDocument/didChange)
      (eglot--signal-textDocument/didChange))))

(defun agent-lsp-language--wait (server ready seconds)
  "Read SERVER's messages until READY returns non-nil, at most SECONDS; its value."
  (let ((process (jsonrpc--process server))
        (deadline (+ (float-time) seconds)))
    (while (and (not (funcall ready)) (< (float-time) deadline) (process-live-p process))
      (accept-process-output process 0.05 nil t))
    (funcall ready)))

;;; Diagnostics

(defun agent-lsp-language--reported-p (server file version since)
  "Whether SERVER has reported on FILE at VERSION.
A server that sends no versions counts by a report after tick SINCE; one that
never reported diagnostics is not waited for."
  (let ((files (gethash server agent-lsp-language--reports)))
    (or (null files)
        (pcase (gethash file files)
          ('nil nil)
          (`(,_uri ,reported ,tick ,_diagnostics)
           (if (and (integerp reported) (integerp version)) (>= reported version) (> tick since)))))))

(defun agent-lsp-language--files (servers &optional only)
  "The diagnostics SERVERS reported, one entry per file; only ONLY's if given."
  (let ((files (make-hash-table :test #'equal)) out)
    (dolist (server servers)
      (when-let ((reports (gethash server agent-lsp-language--reports)))
        (maphash (lambda (file report)
                   (when (or (null only) (equal file only))
                     (let ((entry (gethash file files)))
                       (unless entry
                         (setq entry (list :uri (car report) :diagnostics []))
                         (puthash file entry files)
                         (push entry out))
                       (plist-put entry :diagnostics
                                  (vconcat (plist-get entry :diagnostics) (nth 3 report))))))
                 reports)))
    (vconcat (nreverse out))))

(defun agent-lsp-language--diagnostics (agent params)
  (let* ((seconds (/ (or (plist-get params :timeoutMs) 1500) 1000.0))
         (document (plist-get params :textDocument))
         (everywhere (eq (plist-get params :everywhere) t))
         (everyone (agent-lsp-language--everyone agent)))
    (if (null document)
        (list :servers (vconcat (mapcar #'agent-lsp-language--name everyone))
              :files (agent-lsp-language--files everyone))
      (let* ((buffer (agent-lsp-language--buffer (plist-get document :uri)))
             (server (and buffer (agent-lsp-language--server-of agent buffer))))
        (if (null server)
            (list :servers [])  ; no server for this buffer: the agent asks its own
          (let* ((since agent-lsp-language--tick)
                 (file (expand-file-name (buffer-file-name buffer)))
                 (version (progn (agent-lsp-language--flush buffer)
                                 (buffer-local-value 'eglot--versioned-identifier buffer)))
                 (ready (agent-lsp-language--wait
                         server (lambda () (agent-lsp-language--reported-p server file version since))
                         seconds)))
            `(:servers ,(vector (agent-lsp-language--name server))
              :files ,(if everywhere (agent-lsp-language--files everyone)
                        (agent-lsp-language--files (list server) file))
              ,@(unless ready '(:pending t)))))))))

;;; Requests

(defun agent-lsp-language--request (server method params seconds)
  "SERVER's answer to METHOD with PARAMS, as (:result RESULT).
Nil when it answered with an error or not within SECONDS."
  (let (reply)
    (jsonrpc-async-request server method params
                           :success-fn (lambda (result) (setq reply (list :result result)))
                           :error-fn (lambda (_error) (setq reply 'failed))
                           :timeout-fn (lambda () (setq reply 'failed))
                           :timeout seconds)
    (agent-lsp-language--wait server (lambda () reply) seconds)
    (and (consp reply) reply)))

(defun agent-lsp-language--hover-text (contents)
  (cond ((stringp contents) contents)
        ((vectorp contents) (mapconcat #'agent-lsp-language--hover-text contents "\n"))
        ((plist-get contents :value))))

(defun agent-lsp-language--params (params buffer server)
  "The LSP params of the query PARAMS, for the document in BUFFER served by SERVER."
  (let ((document (and buffer (with-current-buffer buffer (eglot--TextDocumentIdentifier)))))
    (pcase (plist-get params :kind)
      ("workspaceSymbols" (list :query (or (plist-get params :query) "")))
      ("documentSymbols" (list :textDocument document))
      ("codeActions"
       (let* ((range (plist-get params :range))
              (first (plist-get (plist-get range :start) :line))
              (last (plist-get (plist-get range :end) :line))
              (reports (gethash server agent-lsp-language--reports))
              (report (and reports (gethash (expand-file-name (buffer-file-name buffer)) reports)))
              (here (seq-filter (lambda (d)
                                  (let ((r (plist-get d :range)))
                                    (and (<= (plist-get (plist-get r :start) :line) last)
                                         (>= (plist-get (plist-get r :end) :line) first))))
                                (nth 3 report))))
         (list :textDocument document :range range :context (list :diagnostics (vconcat here)))))
      (kind
       (append (list :textDocument document :position (plist-get params :position))
               (pcase kind
                 ("references" (list :context (list :includeDeclaration t)))
                 ("rename" (list :newName (plist-get params :newName)))))))))

(defun agent-lsp-language--answer (kind name result)
  (let ((result (plist-get result :result)))
    (append
     (list :servers (vector name))
     (pcase kind
       ("hover" (list :hover (and result (agent-lsp-language--hover-text (plist-get result :contents)))))
       ("rename" (list :edit result))
       ("codeActions"
        (list :actions (vconcat (seq-filter (lambda (action)
                                              (and (plist-get action :edit)
                                                   (not (stringp (plist-get action :command)))))
                                            result))))
       ((or "documentSymbols" "workspaceSymbols") (list :symbols (vconcat result)))
       (_ (list :locations (cond ((null result) [])
                                 ((vectorp result) result)
                                 (t (vector result)))))))))

(defun agent-lsp-language--ask (agent params method)
  (let* ((kind (plist-get params :kind))
         (seconds (max 5 (/ (or (plist-get params :timeoutMs) 1500) 1000.0)))
         (document (plist-get params :textDocument))
         (buffer (and document (agent-lsp-language--buffer (plist-get document :uri))))
         (servers (if document
                      (when-let ((server (and buffer (agent-lsp-language--server-of agent buffer))))
                        (list server))
                    (agent-lsp-language--everyone agent))))
    (when buffer (agent-lsp-language--flush buffer))
    (or (cl-loop for server in servers
                 for reply = (agent-lsp-language--request
                              server method (agent-lsp-language--params params buffer server) seconds)
                 when reply return (agent-lsp-language--answer kind (agent-lsp-language--name server) reply))
        (list :servers []))))

;;;###autoload
(defun agent-lsp-language-answer (agent params)
  "Answer AGENT's `agent/languageQuery' with PARAMS (a plist).
The answer comes from the servers eglot runs besides AGENT."
  (let* ((kind (plist-get params :kind))
         (method (cdr (assoc kind agent-lsp-language--requests))))
    (cond ((equal kind "diagnostics") (agent-lsp-language--diagnostics agent params))
          (method (agent-lsp-language--ask agent params method))
          (t (jsonrpc-error :code -32602 :message (format "unknown language query kind: %s" kind))))))

(provide 'agent-lsp-language)
;;; agent-lsp-language.el ends here
