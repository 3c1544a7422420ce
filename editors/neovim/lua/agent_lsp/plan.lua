-- Plan mode and the plan: the checklist `todo_write` keeps (plan/update
-- events), the session's permission mode (session/mode events) and
-- :AgentPlan, which switches it.
local M = {}

local methods = require("agent_lsp.protocol").METHODS

local MARKS = { pending = "- [ ]", in_progress = "- [~]", completed = "- [x]" }

--- The transcript lines of a plan/update: "**Plan** (1/2 done)" and one checkbox line per item.
function M.lines(items)
  items = type(items) == "table" and items or {}
  local done = 0
  local out = {}
  for _, item in ipairs(items) do
    if type(item) == "table" then
      if item.status == "completed" then
        done = done + 1
      end
      out[#out + 1] = ("%s %s"):format(MARKS[item.status] or MARKS.pending, tostring(item.content or ""))
    end
  end
  table.insert(out, 1, ("**Plan** (%d/%d done)"):format(done, #out))
  return out
end

--- The one line a session/mode event shows.
function M.mode_line(data)
  if data.mode == "plan" then
    return "_⏸ plan mode: the agent reads and plans, edits and commands are refused_"
  end
  if data.carriedPlan then
    return "_▶ plan mode off: the plan goes to the agent with your next message_"
  end
  return "_▶ plan mode off_"
end

--- The session's permission mode, from its events.
function M.mode_of(s)
  for i = #(s and s.events or {}), 1, -1 do
    local ev = s.events[i]
    if ev.type == "session/mode" then
      return ev.data and ev.data.mode or "default"
    end
  end
  return "default"
end

--- :AgentPlan [on|off] — switch the current session into or out of plan mode
--- (no argument: toggle). Leaving it carries the plan into the next turn.
function M.command(opts)
  local commands = require("agent_lsp.commands")
  local client, c = commands.context()
  local s = c and c.current and require("agent_lsp.state").sessions[c.current] or nil
  if not client or not s then
    return vim.notify("agent_lsp: no agent session yet: ask something with :AgentAsk", vim.log.levels.WARN)
  end
  local arg = vim.trim(opts and opts.args or "")
  local mode
  if arg == "on" then
    mode = "plan"
  elseif arg == "off" then
    mode = "default"
  elseif arg == "" then
    mode = M.mode_of(s) == "plan" and "default" or "plan"
  else
    return vim.notify("agent_lsp: :AgentPlan takes on, off or nothing (toggle)", vim.log.levels.ERROR)
  end
  require("agent_lsp.client").request(client, methods["agent/session/mode"], { sessionId = s.id, mode = mode }, function(err, result)
    if err then
      return vim.notify("agent_lsp: plan mode failed: " .. (err.message or tostring(err)), vim.log.levels.ERROR)
    end
    vim.notify("agent_lsp: " .. (result.mode == "plan" and "plan mode on" or "plan mode off"))
  end)
end

return M
