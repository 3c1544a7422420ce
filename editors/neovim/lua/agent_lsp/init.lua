-- agent_lsp for Neovim: the agent_lsp language server through the built-in LSP client.
--
--   require("agent_lsp").setup({ ... })   -- see :help agent_lsp-config
--   require("agent_lsp").status()         -- "agent idle" / "agent running (2 queued)"
local M = {}

local config = require("agent_lsp.config")

local did_setup = false
local augroup = vim.api.nvim_create_augroup("agent_lsp", { clear = true })

local function wants(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= "" then
    return false
  end
  if vim.api.nvim_buf_get_name(buf) == "" or vim.b[buf].agent_lsp_chat then
    return false
  end
  local fts = config.options.filetypes
  if fts and not vim.tbl_contains(fts, vim.bo[buf].filetype) then
    return false
  end
  return true
end

--- Start (or reuse) the server for a file buffer and attach it.
function M.attach(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  if not wants(buf) then
    return nil
  end
  local client = require("agent_lsp.client")
  local attached = vim.lsp.get_clients({ name = client.name, bufnr = buf })
  if attached[1] then
    return attached[1].id
  end
  return client.start(buf)
end

--- Configure the plugin; safe to call again (options are replaced).
---@param opts table|nil see :help agent_lsp-config
function M.setup(opts)
  if vim.fn.has("nvim-0.10") == 0 then
    vim.notify("agent_lsp needs Neovim 0.10 or newer", vim.log.levels.ERROR)
    return
  end
  config.set(opts)
  did_setup = true
  require("agent_lsp.review") -- draws the agent's pending hunks as review/* events arrive
  require("agent_lsp.attention") -- follows the focus, to tell a user who looked away
  vim.api.nvim_clear_autocmds({ group = augroup })
  -- status() changes from "" once the server attaches: show it without waiting for a keypress.
  vim.api.nvim_create_autocmd({ "LspAttach", "LspDetach" }, {
    group = augroup,
    callback = function(ev)
      local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == require("agent_lsp.client").name then
        vim.schedule(function()
          vim.cmd("redrawstatus!")
        end)
      end
    end,
  })
  if config.options.autostart then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "FileType" }, {
      group = augroup,
      callback = function(ev)
        M.attach(ev.buf)
      end,
    })
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) then
        M.attach(buf)
      end
    end
  end
end

--- setup() with the defaults unless the user already called it.
function M.ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

--- A short status for any statusline: "agent idle", "agent running (2 queued)";
--- "" when the buffer's workspace has no agent server.
---@param buf integer|nil
---@return string
function M.status(buf)
  local state = require("agent_lsp.state")
  local client_mod = require("agent_lsp.client")
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local id = vim.b[buf].agent_lsp_client
  if not id then
    local attached = vim.lsp.get_clients({ name = client_mod.name, bufnr = buf })
    id = attached[1] and attached[1].id
  end
  local c = id and state.clients[id]
  if not c then
    return ""
  end
  local o = config.options.status
  local s = c.current and state.sessions[c.current]
  if not s then
    return o.idle
  end
  if s.held_by then
    return o.idle .. " (read-only)"
  end
  local text = s.status == "running" and o.running or o.idle
  if require("agent_lsp.permissions").is_waiting(s) then
    text = o.waiting
  end
  local queued = state.queued_count(s)
  if queued > 0 then
    text = text .. " (" .. o.queued:format(queued) .. ")"
  end
  return text
end

--- Lua API: send `text` to the agent (like :AgentAsk text).
function M.ask(text)
  require("agent_lsp.commands").ask({ args = text or "", range = 0 })
end

--- Lua API: steer the running turn (like :AgentSteer text).
function M.steer(text)
  require("agent_lsp.commands").steer({ args = text or "", range = 0 })
end

function M.cancel()
  require("agent_lsp.commands").cancel()
end

--- The id of the session shown in the chat of the current buffer's workspace, or nil.
function M.current_session(buf)
  local client = require("agent_lsp.client").for_buffer(buf or 0, false)
  local c = client and require("agent_lsp.state").clients[client.id]
  return c and c.current or nil
end

return M
