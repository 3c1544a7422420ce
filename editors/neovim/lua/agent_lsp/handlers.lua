-- Handlers of what the server sends: session notifications, and the requests
-- the client answers (workspace/applyEdit, agent/permission, agent/saveDocuments).
local M = {}

local state = require("agent_lsp.state")
local methods = require("agent_lsp.protocol").METHODS

local function session_of(params, ctx)
  if type(params) ~= "table" or type(params.sessionId) ~= "string" then
    return nil
  end
  local s = state.session(params.sessionId, ctx.client_id)
  local c = state.clients[ctx.client_id]
  if c then
    c.sessions[s.id] = true
    -- A session started elsewhere (a code action, a command) becomes the chat's
    -- session when the chat shows none.
    if c.current == nil then
      local chat = require("agent_lsp.chat")
      chat.set_session(c, s)
      if require("agent_lsp.config").options.chat.auto_open then
        chat.open(c, false)
      end
    end
  end
  return s
end

local notifications = {}

notifications[methods["session/event"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s then
    state.add_events(s, params.events or {})
    for _, ev in ipairs(params.events or {}) do
      if ev.type == "turn/end" then
        require("agent_lsp.attention").turn_ended(s, ev.data or {})
      end
    end
  end
end

notifications[methods["agent/status"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s and (params.status == "idle" or params.status == "running") then
    state.set_status(s, params.status)
  end
end

notifications[methods["agent/inbox/inserted"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s then
    state.inbox_change(s, "inserted", params)
  end
end

notifications[methods["agent/inbox/discarded"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s then
    state.inbox_change(s, "discarded", params)
  end
end

notifications[methods["agent/inbox/claimed"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s then
    state.inbox_change(s, "claimed", params)
  end
end

notifications[methods["agent/inbox/changed"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s then
    require("agent_lsp.session_control").on_inbox_changed(s, params)
  end
end

notifications[methods["agent/tool/progress"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s then
    require("agent_lsp.chat").tool_progress(s, params.callId, params.data)
  end
end

notifications[methods["agent/subagent/status"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s and type(params.callId) == "string" then
    require("agent_lsp.subagents").on_status(s, params)
  end
end

notifications[methods["agent/permission/answered"]] = function(_, params, ctx)
  if ctx and params and type(params.permissionId) == "string" then
    require("agent_lsp.permissions").settle(ctx.client_id, params.permissionId)
  end
end

notifications[methods["agent/error"]] = function(_, params, ctx)
  local s = session_of(params, ctx)
  if s then
    s.last_error = params.error
  end
  -- The error is shown in the transcript from the durable turn/end event; the
  -- notification only matters when the chat is not visible.
  local chat = require("agent_lsp.chat")
  if s and not chat.is_visible(s) then
    local e = params.error or {}
    vim.notify(("agent_lsp: %s: %s"):format(e.code or "error", e.message or ""), vim.log.levels.ERROR)
  end
end

--- Every handler the agent client registers (vim.lsp.ClientConfig.handlers).
function M.all()
  local all = {}
  for method, fn in pairs(notifications) do
    all[method] = fn
  end
  local permissions = require("agent_lsp.permissions")
  local edits = require("agent_lsp.edits")
  all[methods["agent/permission"]] = permissions.handle_permission
  all[methods["agent/elicit"]] = require("agent_lsp.elicitation").handle
  all[vim.lsp.protocol.Methods.window_showMessageRequest] = permissions.handle_message_request
  all[methods["agent/saveDocuments"]] = edits.handle_save_documents
  local language = require("agent_lsp.language")
  language.install()
  all[methods["agent/languageQuery"]] = language.handle
  all[vim.lsp.protocol.Methods.workspace_applyEdit] = edits.handle_apply_edit
  return all
end

return M
