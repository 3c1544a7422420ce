-- Sub-agents in the chat: a `subagent` tool call is a folded section (a card)
-- whose header shows the sub-agent's live status (agent/subagent/status) and,
-- once it ended, its report; :AgentSubagent opens its own transcript.
local M = {}

--- agent/subagent/status: remember it on the parent session, and show it on the card.
function M.on_status(s, params)
  s.subagents = s.subagents or {}
  s.subagents[params.callId] = params
  local chat = require("agent_lsp.chat")
  local r = chat.renderer_of(s)
  if r then
    r:write(function()
      r:subagent_status(params.callId, params)
    end)
  end
end

--- Sessions of agent/session/list (newest first) with each sub-agent's session
--- moved right under its parent's (children of a parent not listed stay where they are).
function M.nest(sessions)
  local listed, children = {}, {}
  for _, s in ipairs(sessions) do
    listed[s.sessionId] = true
  end
  for _, s in ipairs(sessions) do
    if s.parentToolCallId and listed[s.parentSessionId] then
      children[s.parentSessionId] = children[s.parentSessionId] or {}
      table.insert(children[s.parentSessionId], s)
    end
  end
  local out = {}
  local function add(s)
    out[#out + 1] = s
    for _, child in ipairs(children[s.sessionId] or {}) do
      add(child)
    end
  end
  for _, s in ipairs(sessions) do
    if not (s.parentToolCallId and listed[s.parentSessionId]) then
      add(s)
    end
  end
  return out
end

--- The note on a card's header.
function M.note(status)
  return ("sub-agent %s · :AgentSubagent"):format(status or "running")
end

--- :AgentSubagent — open the transcript of the sub-agent whose card is at or
--- above the cursor in the chat (else the latest one).
function M.open()
  local commands = require("agent_lsp.commands")
  local client, c = commands.context()
  if not client or not c or not c.chat_buf then
    return vim.notify("agent_lsp: no chat to look for sub-agents in", vim.log.levels.WARN)
  end
  local r = require("agent_lsp.render").get(c.chat_buf)
  local row = vim.api.nvim_get_current_buf() == c.chat_buf and (vim.api.nvim_win_get_cursor(0)[1] - 1) or math.huge
  local child = r and r:subagent_near(row)
  if not child then
    return vim.notify("agent_lsp: no sub-agent in this session", vim.log.levels.WARN)
  end
  commands.load(client, c, child)
end

return M
