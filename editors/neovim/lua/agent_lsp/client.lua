-- The connection to agent_lsp servers: one Neovim LSP client per workspace
-- root, started with vim.lsp.start, and the custom requests/notifications of
-- the wire protocol (docs/protocol.md).
local M = {}

local config = require("agent_lsp.config")
local state = require("agent_lsp.state")

M.name = "agent_lsp"

-- Requests made before a client finished `initialize` wait here.
local waiting = {} ---@type table<integer, fun()[]>

local function has_011()
  return vim.fn.has("nvim-0.11") == 1
end

--- Whether the configured server command can be run; else a message with the fix.
---@return boolean ok, string|nil message
function M.check_cmd()
  local cmd = config.options.cmd
  if type(cmd) ~= "table" then
    return true
  end
  local exe = cmd[1]
  if type(exe) == "string" and vim.fn.executable(exe) == 1 then
    return true
  end
  return false,
    ("agent_lsp: the server command `%s` was not found. Install the server from a checkout of agent_lsp "
      .. "(`pipx install /path/to/checkout`, or `pip install .` in it; `pipx install agent-language-server` "
      .. "once it is published), or point the plugin at it: "
      .. "require('agent_lsp').setup({ cmd = { '/path/to/agent-lsp', 'serve' } }). "
      .. "See :checkhealth agent_lsp"):format(tostring(exe))
end

--- The workspace folder of a buffer: the nearest folder with a root marker;
--- else the cwd when the file is under it, else the file's folder.
---@return string
function M.root_for(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local cwd = vim.fn.getcwd()
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" then
    return cwd
  end
  local root = vim.fs.root(buf, config.options.root_markers)
  if root then
    return root
  end
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  if vim.startswith(path, vim.fs.normalize(cwd) .. "/") then
    return cwd
  end
  return vim.fs.dirname(path)
end

---@return vim.lsp.Client[]
function M.clients()
  return vim.lsp.get_clients({ name = M.name })
end

--- Call a client method under both the 0.10 (dot) and 0.11 (colon) APIs.
local function call(client, method, ...)
  if has_011() then
    return client[method](client, ...)
  end
  return client[method](...)
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.agentLsp =
    { permissions = true, saveDocuments = true, events = true, elicitation = true, languageQuery = true }
  return caps
end

local function on_init(client)
  local queue = waiting[client.id] or {}
  waiting[client.id] = nil
  for _, fn in ipairs(queue) do
    fn()
  end
end

local function on_exit(code, signal, client_id)
  waiting[client_id] = nil
  local c = state.clients[client_id]
  state.drop_client(client_id)
  if c then
    require("agent_lsp.permissions").client_gone(c)
    require("agent_lsp.chat").client_gone(c)
  end
  if code ~= 0 and signal ~= 15 then
    vim.schedule(function()
      vim.notify(
        ("agent_lsp: the server exited (code %s, signal %s); :AgentLog lsp shows its log"):format(code, signal),
        vim.log.levels.WARN
      )
    end)
  end
end

function M.client_config(root)
  local opts = config.options
  local settings = opts.settings
  if settings == nil or next(settings) == nil then
    settings = vim.empty_dict()
  end
  return {
    name = M.name,
    cmd = opts.cmd,
    cmd_env = opts.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    capabilities = capabilities(),
    init_options = settings,
    -- Answered to the server's workspace/configuration("agentLsp").
    settings = { agentLsp = settings },
    handlers = require("agent_lsp.handlers").all(),
    flags = { debounce_text_changes = opts.debounce_text_changes },
    on_init = on_init,
    on_exit = on_exit,
  }
end

local warned_missing = false

--- Start (or reuse) the server for `buf`'s root and attach the buffer.
---@param buf integer|nil
---@param opts {attach?: boolean, root?: string}|nil
---@return integer|nil client_id
function M.start(buf, opts)
  opts = opts or {}
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local ok, msg = M.check_cmd()
  if not ok then
    if not warned_missing then
      warned_missing = true
      vim.notify(msg, vim.log.levels.ERROR)
    end
    return nil
  end
  local root = opts.root or M.root_for(buf)
  local attach = opts.attach ~= false
  local id
  if has_011() then
    id = vim.lsp.start(M.client_config(root), { bufnr = buf, attach = attach })
  else
    for _, client in ipairs(M.clients()) do
      if client.config.root_dir == root then
        id = client.id
      end
    end
    if not id then
      id = vim.lsp.start_client(M.client_config(root))
    end
    if id and attach then
      vim.lsp.buf_attach_client(buf, id)
    end
  end
  if id then
    state.client(id, root)
  end
  return id
end

--- The agent client of `buf` (or the chat it shows), starting one if needed.
---@return vim.lsp.Client|nil
function M.for_buffer(buf, start)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local chat_client = vim.b[buf].agent_lsp_client
  if chat_client then
    local client = vim.lsp.get_client_by_id(chat_client)
    if client and not (client.is_stopped and call(client, "is_stopped")) then
      return client
    end
  end
  local attached = vim.lsp.get_clients({ name = M.name, bufnr = buf })
  if attached[1] then
    return attached[1]
  end
  local root = M.root_for(buf)
  for _, client in ipairs(M.clients()) do
    if client.config.root_dir == root then
      return client
    end
  end
  if start == false then
    return nil
  end
  local file_buffer = vim.bo[buf].buftype == "" and vim.api.nvim_buf_get_name(buf) ~= ""
  local id = M.start(buf, { attach = file_buffer, root = root })
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Send a request once the client is initialized; cb(err, result).
function M.request(client, method, params, cb)
  local function send()
    local ok = call(client, "request", method, params, function(err, result)
      if cb then
        cb(err, result)
      elseif err then
        vim.notify(("agent_lsp: %s failed: %s"):format(method, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
    end)
    if not ok and cb then
      cb({ code = vim.lsp.protocol.ErrorCodes.RequestFailed, message = "the agent server is not running" }, nil)
    end
  end
  if client.initialized then
    send()
  else
    waiting[client.id] = waiting[client.id] or {}
    table.insert(waiting[client.id], send)
  end
end

--- Synchronous request (for tests and health): returns err, result.
function M.request_sync(client, method, params, timeout_ms)
  local done, err, result = false, nil, nil
  M.request(client, method, params, function(e, r)
    done, err, result = true, e, r
  end)
  vim.wait(timeout_ms or 5000, function()
    return done
  end, 10)
  if not done then
    return { code = -1, message = method .. " timed out" }, nil
  end
  return err, result
end

function M.workspace_uri(client)
  return vim.uri_from_fname(client.config.root_dir or vim.fn.getcwd())
end

return M
