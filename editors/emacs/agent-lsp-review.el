;;; agent-lsp-review.el --- keep or undo the agent's changes  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; With agent-lsp's setting `edits.review' = "review", the agent's edits
;; land in your buffers unsaved, and each changed place (a hunk) waits for
;; you to keep or undo it (docs/protocol.md, "Reviewing the agent's edits").
;; Here each pending hunk is drawn in its buffer: its new lines highlighted,
;; the lines it replaced or deleted shown above them (struck out, not in
;; the text).  M-x agent-lsp-review lists them all, as diffs:
;;
;;   k  keep the change at point        u  undo it
;;   K  keep all of them                U  undo all of them
;;   RET  go to the change              g  list them again
;;
;; In a file's buffer, M-x agent-lsp-review-keep and agent-lsp-review-undo
;; act on the change at point.  An undo puts the old lines back in the
;; buffer and tells the agent you rejected that change; a file is saved
;; once none of its changes waits.  The server finds the changes in the
;; buffers' unsaved text, which agent-lsp-buffers.el sends it.

;;; Code:

(require 'agent-lsp)
(require 'diff-mode)
(require 'seq)
(require 'subr-x)

(defface agent-lsp-review-added '((t :inherit diff-added))
  "The agent's lines that wait for review."
  :group 'agent-lsp)

(defface agent-lsp-review-removed '((t :inherit diff-removed :strike-through t))
  "The lines a change waiting for review replaced or deleted (not in the text)."
  :group 'agent-lsp)

(defvar agent-lsp-review--overlays (make-hash-table :test #'equal)
  "Project root -> the overlays drawing its pending changes.")

(defun agent-lsp-review--lines (text prefix face)
  "TEXT's lines, each after PREFIX, in FACE, each ending in a newline."
  (mapconcat (lambda (line) (propertize (concat prefix line "\n") 'face face))
             (split-string (string-remove-suffix "\n" text) "\n") ""))

(defun agent-lsp-review--file (hunk)
  (eglot--uri-to-path (plist-get hunk :uri)))

(defun agent-lsp-review--line (hunk edge)
  "The 0-based line of HUNK's range EDGE (:start or :end)."
  (plist-get (plist-get (plist-get hunk :range) edge) :line))

(defun agent-lsp-review--draw (root hunks)
  "Draw the pending HUNKS of the project at ROOT in the buffers of their files."
  (mapc #'delete-overlay (gethash root agent-lsp-review--overlays))
  (puthash root
           (delq nil
                 (mapcar
                  (lambda (hunk)
                    (when-let ((buffer (find-buffer-visiting (agent-lsp-review--file hunk))))
                      (with-current-buffer buffer
                        (save-restriction
                          (widen)
                          (let* ((start (save-excursion (goto-char (point-min))
                                                        (forward-line (agent-lsp-review--line hunk :start))
                                                        (point)))
                                 (end (save-excursion (goto-char (point-min))
                                                      (forward-line (agent-lsp-review--line hunk :end))
                                                      (point)))
                                 (overlay (make-overlay start end nil t nil))
                                 (old (plist-get hunk :oldText)))
                            (overlay-put overlay 'agent-lsp-hunk hunk)
                            (overlay-put overlay 'face 'agent-lsp-review-added)
                            (unless (string-empty-p old)
                              (overlay-put overlay 'before-string
                                           (agent-lsp-review--lines old "" 'agent-lsp-review-removed)))
                            overlay)))))
                  hunks))
           agent-lsp-review--overlays))

(define-derived-mode agent-lsp-review-mode special-mode "Agent review"
  "The agent's changes that wait for you to keep or undo them."
  (setq-local truncate-lines t))

(let ((map agent-lsp-review-mode-map))
  (define-key map (kbd "k") #'agent-lsp-review-keep)
  (define-key map (kbd "u") #'agent-lsp-review-undo)
  (define-key map (kbd "K") #'agent-lsp-review-keep-all)
  (define-key map (kbd "U") #'agent-lsp-review-undo-all)
  (define-key map (kbd "RET") #'agent-lsp-review-visit)
  (define-key map (kbd "g") #'agent-lsp-review))

(defun agent-lsp-review--list (root hunks)
  "Fill the review buffer of the current project with HUNKS (files under ROOT)."
  (with-current-buffer (agent-lsp--list-buffer "review" #'agent-lsp-review-mode)
    (let ((inhibit-read-only t)
          (line (line-number-at-pos)))
      (erase-buffer)
      (insert (if hunks
                  (format "%d change%s of the agent wait%s for review  (k keep, u undo, K/U all, RET visit)\n"
                          (length hunks) (if (cdr hunks) "s" "") (if (cdr hunks) "" "s"))
                "No change of the agent waits for review.\n"))
      (dolist (hunk hunks)
        (let ((from (point)))
          (insert "\n" (propertize (format "%s:%d  (turn %s)\n"
                                           (file-relative-name (agent-lsp-review--file hunk) root)
                                           (1+ (agent-lsp-review--line hunk :start)) (plist-get hunk :turn))
                                   'face 'bold))
          (insert (agent-lsp-review--lines (plist-get hunk :oldText) "-" 'diff-removed))
          (insert (agent-lsp-review--lines (plist-get hunk :newText) "+" 'diff-added))
          (put-text-property (1+ from) (point) 'agent-lsp-hunk hunk)))
      (goto-char (point-min))
      (forward-line (1- line)))
    (current-buffer)))

(defun agent-lsp-review--show (project hunks)
  "Draw HUNKS of PROJECT in its buffers, and in its review list if there is one."
  (let ((root (agent-lsp--root project))
        (hunks (append hunks nil)))
    (agent-lsp-review--draw root hunks)
    (when-let ((review (get-buffer (agent-lsp--list-name "review" project))))
      (with-current-buffer review
        (agent-lsp-review--list root hunks)))))

(defun agent-lsp-review--pending ()
  (append (plist-get (agent-lsp--request :agent/review/list eglot--{}) :hunks) nil))

;;;###autoload
(defun agent-lsp-review ()
  "List the agent's changes that wait for review in this project.
They are drawn in their buffers too."
  (interactive)
  (let* ((project (agent-lsp--project))
         (hunks (agent-lsp-review--pending))
         (root (agent-lsp--root project)))
    (agent-lsp-review--draw root hunks)
    (display-buffer (agent-lsp-review--list root hunks))))

(defun agent-lsp-review--refresh (event)
  "After a live review EVENT, draw the pending changes again (no waiting)."
  (when (string-prefix-p "review/" (or (plist-get event :type) ""))
    (let ((project (agent-lsp--project)))
      (agent-lsp-buffers-flush)
      (jsonrpc-async-request (agent-lsp--server) :agent/review/list eglot--{}
                             :success-fn (lambda (result)
                                           (agent-lsp-review--show project (plist-get result :hunks)))
                             :error-fn #'ignore :timeout-fn #'ignore))))

(add-hook 'agent-lsp-event-functions #'agent-lsp-review--refresh)

(defun agent-lsp-review--at-point ()
  "The pending change at point: in the review list, or drawn on this line."
  (or (get-text-property (point) 'agent-lsp-hunk)
      (seq-some (lambda (overlay) (overlay-get overlay 'agent-lsp-hunk))
                (overlays-in (line-beginning-position) (min (point-max) (1+ (line-end-position)))))
      ;; not drawn yet: ask where the changes of this file are now
      (let ((line (1- (line-number-at-pos))))
        (and buffer-file-name
             (seq-find (lambda (hunk)
                         (let ((start (agent-lsp-review--line hunk :start))
                               (end (agent-lsp-review--line hunk :end)))
                           (if (= start end) (= line start) (and (<= start line) (< line end)))))
                       (plist-get (agent-lsp--request :agent/review/list
                                                      (list :uri (eglot--path-to-uri buffer-file-name)))
                                  :hunks))))
      (user-error "No change of the agent waits for review here")))

(defun agent-lsp-review--resolve (action params)
  "Keep or undo (ACTION) what PARAMS name; say what could not be done."
  (let* ((result (agent-lsp--request :agent/review/resolve (append (list :action action) params)))
         (skipped (append (plist-get result :skipped) nil)))
    (if skipped
        (message "agent-lsp: not %s: %s" (if (equal action "undo") "undone" "kept")
                 (mapconcat (lambda (s) (plist-get s :reason)) skipped "; "))
      (message "agent-lsp: %s %d change%s" (if (equal action "undo") "undid" "kept")
               (length (plist-get result :resolved)) (if (= (length (plist-get result :resolved)) 1) "" "s")))
    (agent-lsp-review--show (agent-lsp--project) (agent-lsp-review--pending))))

(defun agent-lsp-review--one (action)
  (let ((hunk (agent-lsp-review--at-point)))
    (agent-lsp-review--resolve action (list :sessionId (plist-get hunk :sessionId)
                                            :hunkId (plist-get hunk :hunkId)))))

(defun agent-lsp-review--all (action)
  (let ((hunks (agent-lsp-review--pending)))
    (unless hunks (user-error "No change of the agent waits for review"))
    (dolist (session (delete-dups (mapcar (lambda (h) (plist-get h :sessionId)) hunks)))
      (agent-lsp-review--resolve action (list :sessionId session :all t)))))

;;;###autoload
(defun agent-lsp-review-keep ()
  "Keep the agent's change at point."
  (interactive)
  (agent-lsp-review--one "keep"))

;;;###autoload
(defun agent-lsp-review-undo ()
  "Undo the agent's change at point; the agent is told you rejected it."
  (interactive)
  (agent-lsp-review--one "undo"))

;;;###autoload
(defun agent-lsp-review-keep-all ()
  "Keep every change of the agent that waits for review in this project."
  (interactive)
  (agent-lsp-review--all "keep"))

;;;###autoload
(defun agent-lsp-review-undo-all ()
  "Undo every change of the agent that waits for review in this project."
  (interactive)
  (when (or (not (called-interactively-p 'any)) (y-or-n-p "Undo all of the agent's changes? "))
    (agent-lsp-review--all "undo")))

(defun agent-lsp-review-visit ()
  "Go to the change at point in its file."
  (interactive)
  (let ((hunk (agent-lsp-review--at-point)))
    (pop-to-buffer (find-file-noselect (agent-lsp-review--file hunk)))
    (goto-char (point-min))
    (forward-line (agent-lsp-review--line hunk :start))))

(provide 'agent-lsp-review)
;;; agent-lsp-review.el ends here
