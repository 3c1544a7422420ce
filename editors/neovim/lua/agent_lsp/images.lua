-- Images in messages: :AgentAttach {file} attaches an image to the next message
-- (:AgentAttach! removes what is attached), the transcript shows each image of
-- a user's message as an `[image: name, size]` line, and :AgentImage opens the
-- one under the cursor (its bytes from agent/session/file).
--
-- An image is checked here as the server checks it (PNG, JPEG, GIF or WebP by
-- its bytes, at most 5 MB), so a wrong file is named at once; what the server
-- still refuses (a model that takes no images) is shown with its reason and
-- the attachment is kept, to remove or send again.
local M = {}

local methods = require("agent_lsp.protocol").METHODS

M.MAX_BYTES = 5 * 1024 * 1024

local function notify(msg, level)
  vim.notify("agent_lsp: " .. msg, level or vim.log.levels.INFO)
end

--- `12 KB`, as the server writes sizes.
function M.size_text(size)
  if type(size) ~= "number" then
    return nil
  elseif size < 1024 then
    return ("%d B"):format(size)
  elseif size < 1024 * 1024 then
    return ("%.0f KB"):format(size / 1024)
  end
  return ("%.1f MB"):format(size / (1024 * 1024))
end

--- The media type the bytes' header says, if one the models take.
function M.media_type(data)
  if data:sub(1, 8) == "\137PNG\r\n\26\n" then
    return "image/png"
  elseif data:sub(1, 3) == "\255\216\255" then
    return "image/jpeg"
  elseif data:sub(1, 6) == "GIF87a" or data:sub(1, 6) == "GIF89a" then
    return "image/gif"
  elseif data:sub(1, 4) == "RIFF" and data:sub(9, 12) == "WEBP" then
    return "image/webp"
  end
end

--- The image at `path` as an attachment, or nil and what is wrong with it.
---@return table|nil, string|nil
function M.read(path)
  local file = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local name = vim.fs.basename(file)
  local fd = io.open(file, "rb")
  if not fd then
    return nil, ("cannot read the image %s"):format(path)
  end
  local data = fd:read("*a") or ""
  fd:close()
  return M.check(name, data)
end

--- The attachment of the image bytes `data` named `name`, or nil and what is wrong.
function M.check(name, data)
  if #data > M.MAX_BYTES then
    return nil, ("%s is %s, over the limit of 5.0 MB per image; make it smaller"):format(name, M.size_text(#data))
  end
  local media_type = M.media_type(data)
  if not media_type then
    return nil, ("%s is not an image the models take (PNG, JPEG, GIF or WebP)"):format(name)
  end
  return { name = name, size = #data, mediaType = media_type, data = vim.base64.encode(data) }
end

--- The images attached to the next message of a client.
function M.pending(c)
  c.attachments = c.attachments or {}
  return c.attachments
end

--- `shot.png (12 KB), logo.webp (3 KB)`
function M.describe(list)
  local parts = {}
  for _, a in ipairs(list) do
    parts[#parts + 1] = ("%s (%s)"):format(a.name, M.size_text(a.size))
  end
  return table.concat(parts, ", ")
end

-- Programs that print the clipboard's image (PNG) on stdout, tried in order.
M.CLIPBOARD_COMMANDS = {
  { "wl-paste", "--no-newline", "--type", "image/png" },
  { "xclip", "-selection", "clipboard", "-target", "image/png", "-out" },
  { "pngpaste", "-" },
}

--- The image in the system clipboard, or nil and why there is none.
function M.clipboard()
  local tried = {}
  for _, cmd in ipairs(M.CLIPBOARD_COMMANDS) do
    if vim.fn.executable(cmd[1]) == 1 then
      local done = vim.system(cmd, { text = false }):wait(5000)
      local data = done.stdout or ""
      if done.code == 0 and #data > 0 then
        return data
      end
      tried[#tried + 1] = cmd[1]
    end
  end
  if #tried == 0 then
    return nil, "no clipboard program found (wl-paste, xclip or pngpaste)"
  end
  return nil, "the clipboard holds no image (" .. table.concat(tried, ", ") .. ")"
end

--- :AgentAttach[!] [file] — attach an image to the next message (`+` is the
--- clipboard's); with a bang, remove the attached ones; without a file, say
--- what is attached.
function M.attach(opts)
  local _, c = require("agent_lsp.commands").context()
  if not c then
    return
  end
  local list = M.pending(c)
  local path = vim.trim(opts and opts.args or "")
  if opts and opts.bang then
    local removed = M.describe(list)
    c.attachments = {}
    return notify(removed ~= "" and ("removed " .. removed) or "no image is attached")
  end
  if path == "" then
    if #list == 0 then
      return notify("no image is attached: :AgentAttach {file}")
    end
    return notify("attached to your next message: " .. M.describe(list) .. " (:AgentAttach! removes them)")
  end
  local image, problem
  if path == "+" then
    local data
    data, problem = M.clipboard()
    if data then
      image, problem = M.check(("clipboard image %d"):format(#list + 1), data)
    end
  else
    image, problem = M.read(path)
  end
  if not image then
    return notify(problem, vim.log.levels.ERROR)
  end
  list[#list + 1] = image
  notify(("attached %s (%s) to your next message (:AgentAttach! removes it)"):format(image.name, M.size_text(image.size)))
end

--- The content of a message: the text alone, or the text and the attached images.
function M.content(c, text)
  local list = c and M.pending(c) or {}
  if #list == 0 or type(text) ~= "string" then
    return text
  end
  local content = { { type = "text", text = text } }
  for _, a in ipairs(list) do
    content[#content + 1] = { type = "image", data = a.data, mediaType = a.mediaType, name = a.name }
  end
  return content
end

--- The attachments went with a message the server took.
function M.sent(c)
  if c then
    c.attachments = {}
  end
end

--- A stored image's line in the transcript.
function M.line(block)
  local parts = { block.name or block.file }
  parts[#parts + 1] = M.size_text(block.size)
  return "[image: " .. table.concat(parts, ", ") .. "]"
end

local function is_image(block)
  return type(block) == "table" and block.type == "image" and type(block.file) == "string"
end

--- A user message's content without the placeholder text the server writes
--- before each image (the transcript shows the image's own line), and its images.
function M.split(content)
  if type(content) ~= "table" then
    return content, {}
  end
  local kept, images = {}, {}
  for i, block in ipairs(content) do
    if is_image(block) then
      images[#images + 1] = block
    elseif not is_image(content[i + 1]) then
      kept[#kept + 1] = block
    end
  end
  return kept, images
end

--- :AgentImage — open the image of the `[image: …]` line under the cursor.
function M.open_under_cursor()
  local client, c = require("agent_lsp.commands").context()
  local s = c and c.current and require("agent_lsp.state").sessions[c.current]
  local label = vim.api.nvim_get_current_line():match("^%[image: ([^,%]]+)")
  if not client or not s or not label then
    return notify("put the cursor on an [image: …] line of the chat", vim.log.levels.WARN)
  end
  local found
  for _, ev in ipairs(s.events) do
    local msg = ev.type == "user/message" and ev.data and ev.data.message
    for _, block in ipairs(type(msg) == "table" and type(msg.content) == "table" and msg.content or {}) do
      if is_image(block) and (block.name or block.file) == label then
        found = block
      end
    end
  end
  if not found then
    return notify("no image " .. label .. " in this session", vim.log.levels.WARN)
  end
  local params = { sessionId = s.id, file = found.file }
  require("agent_lsp.client").request(client, methods["agent/session/file"], params, function(err, result)
    if err then
      return notify("cannot open " .. label .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    local path = vim.fn.tempname() .. "-" .. found.file
    local fd = assert(io.open(path, "wb"))
    fd:write(vim.base64.decode(result.data))
    fd:close()
    M.last_opened = path
    local ok, problem = pcall(vim.ui.open, path)
    if not ok then
      notify(("the image is in %s (%s)"):format(path, problem), vim.log.levels.WARN)
    end
  end)
end

return M
