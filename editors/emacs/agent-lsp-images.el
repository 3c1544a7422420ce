;;; agent-lsp-images.el --- images in agent-lsp messages  -*- lexical-binding: t -*-

;;; Commentary:

;; Attach images to your next message to the agent:
;;
;;   M-x agent-lsp-attach-image            an image file (PNG, JPEG, GIF or WebP, at most 5 MB)
;;   M-x agent-lsp-attach-clipboard-image  the image in the clipboard (a graphical frame)
;;   M-x agent-lsp-clear-attachments       remove what is attached
;;
;; An image is checked here as the server checks it (by its bytes), so a
;; file that is not one is named at once.  When the server refuses the
;; message (a model that takes no images) its reason is shown and the
;; images stay attached, to remove or send again.  The chat buffer shows
;; each image of a message as an `[image: name, size]' button that opens it,
;; and, in a graphical frame, the image itself below it (its bytes from
;; agent/session/file).

;;; Code:

(require 'jsonrpc)
(require 'seq)
(require 'subr-x)

(defvar agent-lsp--session)
(declare-function agent-lsp--server "agent-lsp")
(declare-function agent-lsp--insert "agent-lsp")
(declare-function agent-lsp--request "agent-lsp")

(defconst agent-lsp-images-max-bytes (* 5 1024 1024)
  "The largest image the server takes (the smallest provider limit).")

(defcustom agent-lsp-image-max-height 160
  "The height, in pixels, of an image shown in the chat buffer."
  :type 'integer
  :group 'agent-lsp)

(defvar agent-lsp-images--attached nil
  "The images attached to the next message, oldest first: plists with
:name, :size, :mediaType and :data (base64).")

(defun agent-lsp-images-size-text (size)
  "SIZE in bytes as the server writes it: `70 B', `12 KB', `6.0 MB'."
  (cond ((not (numberp size)) nil)
        ((< size 1024) (format "%d B" size))
        ((< size (* 1024 1024)) (format "%.0f KB" (/ size 1024.0)))
        (t (format "%.1f MB" (/ size (* 1024.0 1024))))))

(defun agent-lsp-images-media-type (bytes)
  "The media type the header of the unibyte string BYTES says.
Nil unless one the models take."
  (cond ((string-prefix-p "\211PNG\r\n\032\n" bytes) "image/png")
        ((string-prefix-p "\377\330\377" bytes) "image/jpeg")
        ((or (string-prefix-p "GIF87a" bytes) (string-prefix-p "GIF89a" bytes)) "image/gif")
        ((and (string-prefix-p "RIFF" bytes) (>= (length bytes) 12)
              (string= (substring bytes 8 12) "WEBP"))
         "image/webp")))

(defun agent-lsp-images-check (name bytes)
  "An attachment of the image BYTES named NAME.
A `user-error' says what is wrong with one the server would refuse."
  (cond ((zerop (length bytes)) (user-error "%s is empty, not an image" name))
        ((> (length bytes) agent-lsp-images-max-bytes)
         (user-error "%s is %s, over the limit of 5.0 MB per image; make it smaller"
                     name (agent-lsp-images-size-text (length bytes)))))
  (let ((type (or (agent-lsp-images-media-type bytes)
                  (user-error "%s is not an image the models take (PNG, JPEG, GIF or WebP)" name))))
    (list :name name :size (length bytes) :mediaType type :data (base64-encode-string bytes t))))

(defun agent-lsp-images--describe (attached)
  (mapconcat (lambda (a) (format "%s (%s)" (plist-get a :name) (agent-lsp-images-size-text (plist-get a :size))))
             attached ", "))

(defun agent-lsp-images--attach (image)
  (setq agent-lsp-images--attached (append agent-lsp-images--attached (list image)))
  (message "Attached %s to your next message (M-x agent-lsp-clear-attachments removes it)"
           (agent-lsp-images--describe (list image))))

;;;###autoload
(defun agent-lsp-attach-image (file)
  "Attach the image FILE to your next message to the agent."
  (interactive "fAttach image: ")
  (let ((bytes (with-temp-buffer
                 (set-buffer-multibyte nil)
                 (condition-case err
                     (insert-file-contents-literally (expand-file-name file))
                   (file-error (user-error "Cannot read the image %s: %s" file (error-message-string err))))
                 (buffer-string))))
    (agent-lsp-images--attach (agent-lsp-images-check (file-name-nondirectory file) bytes))))

;;;###autoload
(defun agent-lsp-attach-clipboard-image ()
  "Attach the image in the clipboard to your next message (a graphical frame)."
  (interactive)
  (let ((bytes (seq-some (lambda (type) (ignore-errors (gui-get-selection 'CLIPBOARD type)))
                         '(image/png image/jpeg image/gif image/webp))))
    (unless (stringp bytes)
      (user-error "The clipboard holds no image"))
    (agent-lsp-images--attach
     (agent-lsp-images-check (format "clipboard image %d" (1+ (length agent-lsp-images--attached)))
                             (encode-coding-string bytes 'no-conversion)))))

;;;###autoload
(defun agent-lsp-clear-attachments ()
  "Remove the images attached to your next message."
  (interactive)
  (message (if agent-lsp-images--attached
               (format "Removed %s" (agent-lsp-images--describe agent-lsp-images--attached))
             "No image is attached"))
  (setq agent-lsp-images--attached nil))

(defun agent-lsp-images-content (text)
  "The content of a message of TEXT.
TEXT alone, or its text and the attached images."
  (if (null agent-lsp-images--attached)
      text
    (vconcat (list (list :type "text" :text text))
             (mapcar (lambda (a) (list :type "image" :data (plist-get a :data)
                                       :mediaType (plist-get a :mediaType) :name (plist-get a :name)))
                     agent-lsp-images--attached))))

(defun agent-lsp-images-send (send)
  "Call SEND, which sends the message.
The images go with it, or stay attached when it is refused."
  (condition-case err
      (prog1 (funcall send)
        (setq agent-lsp-images--attached nil))
    (jsonrpc-error
     (let ((reason (or (alist-get 'jsonrpc-error-message (cdr err)) (error-message-string err))))
       (user-error "The agent refused the message: %s%s" reason
                   (if agent-lsp-images--attached
                       " (the images stay attached: M-x agent-lsp-clear-attachments removes them)"
                     ""))))))

(defun agent-lsp-images--stored-p (block)
  (and (equal (plist-get block :type) "image") (stringp (plist-get block :file))))

(defun agent-lsp-images-text-blocks (content)
  "CONTENT's blocks without the image references and the placeholder the server
writes before each one."
  (let ((blocks (append content nil)) kept)
    (while blocks
      (let ((block (pop blocks)))
        (unless (or (agent-lsp-images--stored-p block)
                    (agent-lsp-images--stored-p (car blocks)))
          (push block kept))))
    (nreverse kept)))

(defun agent-lsp-images-of (content)
  "The stored images a message's CONTENT refers to."
  (seq-filter #'agent-lsp-images--stored-p (append content nil)))

(defun agent-lsp-images--label (block)
  (format "[image: %s]" (string-join (delq nil (list (or (plist-get block :name) (plist-get block :file))
                                                      (agent-lsp-images-size-text (plist-get block :size))))
                                     ", ")))

(defun agent-lsp-images--bytes (session file)
  "The bytes of the stored image FILE of SESSION."
  (base64-decode-string (plist-get (agent-lsp--request :agent/session/file (list :sessionId session :file file))
                                   :data)))

(defun agent-lsp-open-image (session file)
  "Open the stored image FILE of SESSION in a buffer of its own."
  (let ((path (expand-file-name (concat "agent-lsp-" file) temporary-file-directory)))
    (let ((coding-system-for-write 'no-conversion))
      (write-region (agent-lsp-images--bytes session file) nil path nil 'silent))
    (find-file-other-window path)))

(defun agent-lsp-images--show-at (at session file type label)
  "Insert the stored image FILE of SESSION (of image TYPE) at the marker AT,
once its bytes come."
  (jsonrpc-async-request
   (agent-lsp--server) :agent/session/file (list :sessionId session :file file)
   :success-fn
   (lambda (result)
     (when (buffer-live-p (marker-buffer at))
       (with-current-buffer (marker-buffer at)
         (let ((inhibit-read-only t)
               (image (create-image (base64-decode-string (plist-get result :data)) type t
                                    :max-height agent-lsp-image-max-height)))
           (save-excursion
             (goto-char at)
             (insert-image image label))))))))

(defun agent-lsp-images-insert (block)
  "Append the line of the stored image BLOCK to the chat buffer (current): a
button that opens it, and in a graphical frame the image itself."
  (let ((session agent-lsp--session)
        (file (plist-get block :file))
        (label (agent-lsp-images--label block))
        (type (pcase (plist-get block :mediaType)
                ("image/png" 'png) ("image/jpeg" 'jpeg) ("image/gif" 'gif) ("image/webp" 'webp))))
    (progn
      (let ((inhibit-read-only t))
        (save-excursion
          (goto-char (point-max))
          (insert "  ")
          (insert-text-button label 'action (lambda (_) (agent-lsp-open-image session file))
                              'help-echo "Open the image")
          (insert "\n")
          (when (and session type (display-graphic-p) (image-type-available-p type))
            (agent-lsp-images--show-at (copy-marker (point)) session file type label)
            (insert "\n")))))))

(provide 'agent-lsp-images)
;;; agent-lsp-images.el ends here
