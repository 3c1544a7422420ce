;;; agent-lsp-sessions.el --- agent-lsp's sessions, queue and MCP servers  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; The commands of agent-lsp.el that look at the project's sessions: start a
;; new one, resume an earlier one, the messages queued for the agent, the
;; project's MCP servers.  Each works on the project of the buffer it is
;; called from, and its chat buffer.

;;; Code:

(require 'agent-lsp)
(require 'agent-lsp-held)
(require 'seq)

(defun agent-lsp--show-session (session-id)
  "Make SESSION-ID the session of the project's chat, with its whole transcript."
  (let ((loaded (agent-lsp--request :agent/session/load (list :sessionId session-id))))
    (with-current-buffer (agent-lsp-chat-buffer)
      (let ((inhibit-read-only t)) (erase-buffer))
      (setq agent-lsp--session session-id
            agent-lsp--streaming nil)
      (seq-do #'agent-lsp--render (plist-get loaded :events))
      (agent-lsp-held-follow session-id loaded)) ; another window's: read-only, followed
    (agent-lsp-show)))

;;;###autoload
(defun agent-lsp-new-session ()
  "Start a new, empty session; what you ask next goes to it."
  (interactive)
  (let ((created (agent-lsp--request :agent/session/new (list :workspaceUri (agent-lsp--workspace-uri)))))
    (agent-lsp--show-session (plist-get created :sessionId))))

(defun agent-lsp--session-label (info)
  "A line naming the session INFO: its title, turns and when it changed."
  (format "%s · %d turn%s · %s · %s"
          (or (plist-get info :title) "(untitled)")
          (plist-get info :turns) (if (eql (plist-get info :turns) 1) "" "s")
          (format-time-string "%Y-%m-%d %H:%M" (/ (plist-get info :updatedAt) 1000))
          (plist-get info :sessionId)))

;;;###autoload
(defun agent-lsp-resume (session-id)
  "Show the session SESSION-ID of this project; what you ask next goes to it.
Interactively, pick one of the project's sessions, newest first."
  (interactive
   (let* ((sessions (append (plist-get (agent-lsp--request :agent/session/list
                                                           (list :workspaceUri (agent-lsp--workspace-uri)))
                                       :sessions)
                            nil))
          (labels (mapcar (lambda (info) (cons (agent-lsp--session-label info) (plist-get info :sessionId)))
                          sessions)))
     (unless labels (user-error "This project has no sessions yet"))
     (list (cdr (assoc (completing-read "Resume session: " labels nil t) labels)))))
  (agent-lsp--show-session session-id))

(defun agent-lsp--text-of (content)
  "The text of a message's CONTENT blocks."
  (mapconcat (lambda (block) (or (plist-get block :text) "")) (append content nil) ""))

;;;###autoload
(defun agent-lsp-queue ()
  "Show the messages waiting for the agent; with a key, remove one."
  (interactive)
  (let* ((session (agent-lsp--current-session))
         (inbox (plist-get (agent-lsp--request :agent/session/load (list :sessionId session)) :inbox))
         ;; the user's messages only: a note for the model (a change undone in review) is not theirs
         (queued (seq-filter (lambda (message) (member (plist-get message :source) '(nil "user")))
                             (append (plist-get inbox :nextStep) (plist-get inbox :nextTurn) nil))))
    (with-current-buffer (agent-lsp--list-buffer "queue")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (if queued (format "%d queued for the agent (d: remove the message at point)\n" (length queued))
                  "Nothing is queued.\n"))
        (dolist (message queued)
          (insert (propertize (format "- %s\n" (agent-lsp--text-of (plist-get message :content)))
                              'agent-lsp-message (plist-get message :id)))))
      (local-set-key (kbd "d") #'agent-lsp-queue-remove)
      (display-buffer (current-buffer)))))

(defun agent-lsp-queue-remove ()
  "Remove the queued message at point before the agent reads it."
  (interactive)
  (let ((id (get-text-property (point) 'agent-lsp-message)))
    (unless id (user-error "No queued message here"))
    (agent-lsp--request :agent/inbox/remove (list :sessionId (agent-lsp--current-session) :messageId id))
    (agent-lsp-queue)))

;;;###autoload
(defun agent-lsp-mcp-status ()
  "Show the project's MCP servers: their state, tools, and why one waits or failed."
  (interactive)
  (let ((servers (append (plist-get (agent-lsp--request :agent/mcp/list (list :workspaceUri (agent-lsp--workspace-uri)))
                                    :servers)
                         nil)))
    (with-current-buffer (agent-lsp--list-buffer "MCP")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (if servers "" "No MCP server is configured.\n"))
        (dolist (server servers)
          (insert (format "%s  %s  (%s)%s%s\n" (plist-get server :name) (plist-get server :state)
                          (plist-get server :source)
                          (if (eql (plist-get server :toolCount) 0) ""
                            (format "  %d tools" (plist-get server :toolCount)))
                          (if (plist-get server :reason) (concat "  " (plist-get server :reason)) "")))))
      (display-buffer (current-buffer)))))

(provide 'agent-lsp-sessions)
;;; agent-lsp-sessions.el ends here
