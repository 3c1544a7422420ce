;;; agent-lsp-buffers.el --- agent-lsp sees the buffers its edits land in  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; agent-lsp's eglot connection manages only the chat buffer: eglot tells
;; it nothing of the buffers of your files, which the buffer's own language
;; server manages.  Yet the agent must see what is in a buffer it edited and
;; you did not save yet: the changes it holds for your review
;; (`edits.review' = "review") are in that unsaved text, and an undo puts
;; old lines back there.
;;
;; So a buffer the agent edits is opened to agent-lsp here
;; (textDocument/didOpen with its text), and from then on its text goes to
;; agent-lsp after each change (textDocument/didChange with the whole text,
;; once you pause typing, and always before this package asks agent-lsp
;; anything: `agent-lsp-buffers-flush').  The versions are this package's
;; own count of changes; an edit agent-lsp made for an older text than the
;; buffer's is refused (`agent-lsp-buffers-stale'), never applied blindly.
;; A connection that starts again is told of the modified buffers of its
;; project, where a review it reads back from its logs waits.

;;; Code:

(require 'eglot)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)

(defcustom agent-lsp-buffers-delay 0.3
  "Seconds of idle time after which a changed buffer's text goes to agent-lsp."
  :type 'number
  :group 'agent-lsp)

(defvar-local agent-lsp-buffers--server nil
  "The agent-lsp connection that knows this buffer's text, or nil.")

(defvar-local agent-lsp-buffers--version 0
  "How many changes this buffer had since agent-lsp was told of it.")

(defvar-local agent-lsp-buffers--dirty nil
  "Non-nil when the buffer changed since agent-lsp last got its text.")

(defvar agent-lsp-buffers--changed nil "The buffers whose text agent-lsp has not got yet.")

(defvar agent-lsp-buffers--timer nil "The idle timer that sends the changed buffers.")

(defun agent-lsp-buffers--text ()
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

(defun agent-lsp-buffers--identifier ()
  (list :uri (eglot--path-to-uri buffer-file-name) :version agent-lsp-buffers--version))

(defun agent-lsp-buffers--live-p ()
  (and agent-lsp-buffers--server (jsonrpc-running-p agent-lsp-buffers--server)))

(defun agent-lsp-buffers-open (server buffer)
  "Tell SERVER the text of BUFFER, and its text after each change from now on.
Nothing when SERVER knows it already."
  (with-current-buffer buffer
    (when (and buffer-file-name
               (not (and (eq agent-lsp-buffers--server server) (agent-lsp-buffers--live-p))))
      (setq agent-lsp-buffers--server server
            agent-lsp-buffers--version (1+ agent-lsp-buffers--version)
            agent-lsp-buffers--dirty nil)
      (jsonrpc-notify server :textDocument/didOpen
                      (list :textDocument
                            (append (agent-lsp-buffers--identifier)
                                    (list :languageId (string-remove-suffix "-mode" (symbol-name major-mode))
                                          :text (agent-lsp-buffers--text)))))
      (add-hook 'after-change-functions #'agent-lsp-buffers--after-change nil t)
      (add-hook 'kill-buffer-hook #'agent-lsp-buffers--close nil t))))

(defun agent-lsp-buffers-adopt (server root)
  "Tell SERVER of the modified buffers of files under ROOT.
A review read back from the session logs waits in their unsaved text."
  (let ((root (file-name-as-directory (expand-file-name root))))
    (dolist (buffer (buffer-list))
      (when-let ((file (buffer-file-name buffer)))
        (when (and (buffer-modified-p buffer) (string-prefix-p root (expand-file-name file)))
          (agent-lsp-buffers-open server buffer))))))

(defun agent-lsp-buffers--after-change (&rest _)
  (when (agent-lsp-buffers--live-p)
    (setq agent-lsp-buffers--version (1+ agent-lsp-buffers--version))
    (unless agent-lsp-buffers--dirty
      (setq agent-lsp-buffers--dirty t)
      (push (current-buffer) agent-lsp-buffers--changed))
    (unless agent-lsp-buffers--timer
      (setq agent-lsp-buffers--timer
            (run-with-idle-timer agent-lsp-buffers-delay nil #'agent-lsp-buffers-flush)))))

(defun agent-lsp-buffers-flush ()
  "Send agent-lsp the text of each buffer that changed since it last got it."
  (when agent-lsp-buffers--timer
    (cancel-timer agent-lsp-buffers--timer)
    (setq agent-lsp-buffers--timer nil))
  (let ((changed (nreverse agent-lsp-buffers--changed)))
    (setq agent-lsp-buffers--changed nil)
    (dolist (buffer changed)
      (when (buffer-live-p buffer)
        (with-current-buffer buffer
          (when (and agent-lsp-buffers--dirty (agent-lsp-buffers--live-p))
            (setq agent-lsp-buffers--dirty nil)
            (jsonrpc-notify agent-lsp-buffers--server :textDocument/didChange
                            (list :textDocument (agent-lsp-buffers--identifier)
                                  :contentChanges (vector (list :text (agent-lsp-buffers--text)))))))))))

(defun agent-lsp-buffers--close ()
  (when (agent-lsp-buffers--live-p)
    (jsonrpc-notify agent-lsp-buffers--server :textDocument/didClose
                    (list :textDocument (list :uri (eglot--path-to-uri buffer-file-name)))))
  (setq agent-lsp-buffers--server nil))

(defun agent-lsp-buffers-stale (server edit)
  "Why SERVER's workspace EDIT is for an older text than a buffer has, or nil.
Strips the versions this package checked from EDIT (eglot would compare
them with its own count)."
  (let (why)
    (seq-doseq (change (plist-get edit :documentChanges))
      (when-let* ((document (plist-get change :textDocument))
                  (version (plist-get document :version))
                  (buffer (find-buffer-visiting (eglot--uri-to-path (plist-get document :uri)))))
        (with-current-buffer buffer
          (when (eq agent-lsp-buffers--server server)
            (unless (or why (eql version agent-lsp-buffers--version))
              (setq why (format "%s changed in the editor (version %s, the edit is for %s)"
                                (buffer-name) agent-lsp-buffers--version version)))
            (plist-put document :version nil)))))
    why))

(provide 'agent-lsp-buffers)
;;; agent-lsp-buffers.el ends here
