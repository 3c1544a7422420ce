-- Mentions in a message to the agent, as codecompanion users have them:
--
--   @path/to/file   that file of the workspace (relative to its root, or
--                   absolute), its text as the editor has it
--   #buffer         the buffer you asked from, its unsaved changes included
--   #buffers        every loaded file buffer of the workspace
--   #symbol:Name    where the language server of the buffer you asked from
--                   finds Name (workspace/symbol): its code and place
--
-- Each becomes a context item of the message (`{kind = "file", uri, text}`,
-- a symbol `{kind = "selection", uri, range, text}`);
-- the words stay in the text, so the agent reads which file you meant where.
-- A word after @ that names no file is left alone (`@server:uri` is an MCP
-- resource, which the server resolves). In the input window of :AgentAsk,
-- <C-x><C-o> after @ or # completes them (files of the workspace, symbols).
local M = {}

local api = vim.api

-- A file larger than this is named, not attached: the agent reads it with its tools.
M.MAX_BYTES = 256 * 1024
-- At most this many files are offered for completion.
M.MAX_FILES = 5000

local SKIP_DIRS = { [".git"] = true, node_modules = true, [".venv"] = true, __pycache__ = true, [".hg"] = true }

local function buffer_text(buf)
  return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

--- The context item of the file at `path` (absolute): the loaded buffer's text,
--- or the file's on disk; a file too large is only named.
function M.file_item(path)
  local item = { kind = "file", uri = vim.uri_from_fname(path) }
  local buf = vim.fn.bufnr(path)
  local text
  if buf ~= -1 and api.nvim_buf_is_loaded(buf) then
    text = buffer_text(buf)
  else
    local f = io.open(path, "rb")
    if f then
      text = f:read(M.MAX_BYTES + 1)
      f:close()
    end
  end
  if text and #text > M.MAX_BYTES then
    item.note = ("over %d KB, not attached: read it with the tools"):format(M.MAX_BYTES / 1024)
  elseif text then
    item.text = text
  end
  return item
end

local function in_root(path, root)
  return root ~= nil and (path == root or vim.startswith(path, root .. "/"))
end

--- The file a mention names, or nil: relative to `root`, absolute, or ~/.
local function mentioned_file(word, root)
  word = word:gsub("[%.,;:!?%)]+$", "") -- the sentence's punctuation after it
  if word == "" then
    return nil
  end
  local path
  if word:sub(1, 1) == "/" or word:sub(1, 1) == "~" then
    path = vim.fs.normalize(word) -- ~ expanded
  else
    path = vim.fs.normalize((root or vim.fn.getcwd()) .. "/" .. word)
  end
  if vim.fn.filereadable(path) == 1 then
    return path
  end
end

-- A client's method: `client:name(...)` from Neovim 0.11, `client.name(...)` before.
local function method(client, name, ...)
  if vim.fn.has("nvim-0.11") == 1 then
    return client[name](client, ...)
  end
  return client[name](...)
end

--- The language servers of `buf` that find symbols (not agent_lsp's own).
local function symbol_clients(buf)
  local agent = require("agent_lsp.client").name
  return vim.tbl_filter(function(client)
    return client.name ~= agent and method(client, "supports_method", "workspace/symbol")
  end, vim.lsp.get_clients({ bufnr = buf }))
end

--- The symbols named like `query` that the language servers of `buf` find (workspace/symbol).
function M.symbols(buf, query, timeout_ms)
  local found = {}
  if not (buf and api.nvim_buf_is_valid(buf)) then
    return found
  end
  for _, client in ipairs(symbol_clients(buf)) do
    local reply = method(client, "request_sync", "workspace/symbol", { query = query }, timeout_ms or 2000, buf)
    for _, symbol in ipairs(reply and reply.result or {}) do
      if symbol.location and symbol.location.range then
        found[#found + 1] = symbol
      end
    end
  end
  return found
end

--- The context item of the symbol `name` (an exact name first), or nil.
local function symbol_item(name, origin)
  local symbols = M.symbols(origin, name)
  local best
  for _, symbol in ipairs(symbols) do
    if symbol.name == name then
      best = symbol
      break
    end
  end
  best = best or symbols[1]
  if not best then
    return nil
  end
  local path = vim.uri_to_fname(best.location.uri)
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  local first = best.location.range.start.line
  local last = M.block_end(api.nvim_buf_get_lines(buf, first, first + M.MAX_SYMBOL_LINES, false))
  local lines = api.nvim_buf_get_lines(buf, first, first + last, false)
  return { kind = "selection", uri = best.location.uri, text = table.concat(lines, "\n"),
           range = { start = { line = first, character = 0 }, ["end"] = { line = first + last, character = 0 } } }
end

-- A symbol's code is at most this many lines.
M.MAX_SYMBOL_LINES = 200

--- How many of `lines` (a symbol's first line, then what follows) are its
--- code: the lines indented deeper than the first, and a closing line at its
--- indent (`}`, `end`, ...); blank lines at the end left out.
function M.block_end(lines)
  local indent = #(lines[1] or ""):match("^%s*")
  local n = 1
  for i = 2, #lines do
    local line = lines[i]
    if line:find("%S") and #line:match("^%s*") <= indent then
      if line:match("^%s*[%]})]") or line:match("^%s*end%f[%W]") then
        n = i
      end
      break
    end
    n = i
  end
  while n > 1 and not lines[n]:find("%S") do
    n = n - 1
  end
  return n
end

--- The context items the mentions of `text` name. `origin` is the buffer the
--- user asked from (#buffer), `root` the workspace folder.
---@return table[]
function M.items(text, origin, root)
  local items, seen = {}, {}
  local function add(path)
    if path and not seen[path] then
      seen[path] = true
      items[#items + 1] = M.file_item(path)
    end
  end
  for word in (" " .. text):gmatch("%s@([^%s`'\"]+)") do
    add(mentioned_file(word, root))
  end
  for name in (" " .. text):gmatch("%s#symbol:([%w_%.]+)") do
    local item = symbol_item(name, origin)
    local key = item and (item.uri .. ":" .. item.range.start.line)
    if item and not seen[key] then
      seen[key] = true
      items[#items + 1] = item
    end
  end
  for word in (" " .. text):gmatch("%s#(buffers?)%f[^%w_]") do
    if word == "buffer" then
      local name = origin and api.nvim_buf_is_valid(origin) and api.nvim_buf_get_name(origin) or ""
      if name ~= "" and vim.bo[origin].buftype == "" then
        add(name)
      end
    else
      for _, buf in ipairs(api.nvim_list_bufs()) do
        local name = api.nvim_buf_get_name(buf)
        if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buflisted and vim.bo[buf].buftype == "" and in_root(name, root) then
          add(name)
        end
      end
    end
  end
  return items
end

--- A message's context: `first` (its selection, or nil), then what the
--- mentions of `text` name; nil when there is none.
function M.context(first, text, origin, root)
  local items = first and { first } or {}
  vim.list_extend(items, M.items(text, origin, root))
  return #items > 0 and items or nil
end

--- The workspace's files, relative to `root`, at most M.MAX_FILES.
local function workspace_files(root)
  local files = {}
  for name, kind in vim.fs.dir(root, {
    depth = 12,
    skip = function(dir)
      return not SKIP_DIRS[vim.fs.basename(dir)]
    end,
  }) do
    if kind == "file" then
      files[#files + 1] = name
      if #files >= M.MAX_FILES then
        break
      end
    end
  end
  table.sort(files)
  return files
end

--- Completion of @file and #buffer(s) at the cursor: complete-items whose word
--- starts with @ or #. `base` is what was typed, @ or # included.
function M.complete(base, root, origin)
  local out = {}
  if vim.startswith(base, "#symbol:") then
    for _, symbol in ipairs(M.symbols(origin, base:sub(9), 1000)) do
      out[#out + 1] = { word = "#symbol:" .. symbol.name, menu = vim.fn.fnamemodify(vim.uri_to_fname(symbol.location.uri), ":~:.") }
    end
    return out
  end
  if base:sub(1, 1) == "#" then
    for _, w in ipairs({ { "#buffer", "the buffer you asked from" }, { "#buffers", "every loaded file buffer" },
                         { "#symbol:", "a symbol your language server finds" } }) do
      if vim.startswith(w[1], base) then
        out[#out + 1] = { word = w[1], menu = w[2] }
      end
    end
    return out
  end
  local typed = base:sub(2):lower()
  for _, rel in ipairs(workspace_files(root or vim.fn.getcwd())) do
    if typed == "" or rel:lower():find(typed, 1, true) then
      out[#out + 1] = { word = "@" .. rel, menu = "file" }
    end
  end
  return out
end

---@type table<integer, {root: string, origin: integer}> input buffer -> where its completion looks
local inputs = {}

--- 'omnifunc' of the input window.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local col = api.nvim_win_get_cursor(0)[2]
    local start = api.nvim_get_current_line():sub(1, col):find("[@#][^%s]*$")
    return start and start - 1 or -3
  end
  local input = inputs[api.nvim_get_current_buf()] or {}
  return M.complete(base, input.root, input.origin)
end

--- Offer mentions in the input buffer `buf` (<C-x><C-o>): files of `root`,
--- symbols of the language servers of `origin` (the buffer asked from).
function M.attach(buf, root, origin)
  inputs[buf] = { root = root, origin = origin }
  vim.bo[buf].omnifunc = "v:lua.require'agent_lsp.mentions'.omnifunc"
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      inputs[buf] = nil
    end,
  })
end

return M
