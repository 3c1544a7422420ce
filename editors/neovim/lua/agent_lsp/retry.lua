-- :AgentRetry — send the message of the session's last turn again when that
-- turn failed (a model error, an interrupted server): the same content and
-- context, as a new followup. The failed turn stays in the transcript.
local M = {}

local state = require("agent_lsp.state")
local methods = require("agent_lsp.protocol").METHODS

local function notify(msg, level)
  vim.notify("agent_lsp: " .. msg, level or vim.log.levels.INFO)
end

--- The user's message of `s`'s last turn when that turn failed, else nil.
---@return table|nil message, integer|nil turn
function M.failed_message(s)
  local last
  for i = #s.events, 1, -1 do
    if s.events[i].type == "turn/end" then
      last = s.events[i]
      break
    end
  end
  local reason = last and last.data and last.data.reason
  local kind = type(reason) == "table" and reason.kind
  if kind ~= "error" and kind ~= "interrupted" then
    return nil
  end
  for _, ev in ipairs(s.events) do
    local msg = ev.type == "user/message" and ev.data and ev.data.message
    if ev.data.turn == last.data.turn and type(msg) == "table" and msg.source == "user" and msg.delivery ~= "steer" then
      return msg, last.data.turn
    end
  end
end

--- The message's content without the context blocks the server added (they
--- are sent again as `context`).
local function content_of(msg)
  if type(msg.content) ~= "table" then
    return msg.content
  end
  return vim.tbl_filter(function(block)
    return not (block.type == "text" and type(block.text) == "string" and block.text:find("^<context>"))
  end, msg.content)
end

function M.command()
  local commands = require("agent_lsp.commands")
  local client, c = commands.context()
  local s = c and c.current and state.sessions[c.current] or nil
  if not client or not s then
    return notify("no agent session yet: ask something with :AgentAsk", vim.log.levels.WARN)
  end
  if s.status == "running" then
    return notify("the turn is still running", vim.log.levels.WARN)
  end
  local msg = M.failed_message(s)
  if not msg then
    return notify("the last turn did not fail: nothing to retry", vim.log.levels.WARN)
  end
  local context = type(msg.context) == "table" and #msg.context > 0 and msg.context or nil
  commands.send(client, c, methods["agent/followup"], content_of(msg), context)
end

return M
