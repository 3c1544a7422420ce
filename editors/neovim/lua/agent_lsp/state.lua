-- What the plugin knows about each server client and each session.
--
-- Sessions are rebuilt only from the wire: `session/event` notifications and the
-- pages of agent/session/replay (or a whole agent/session/load) go through
-- `reset_events` and `add_page`, so a resumed session is derived by exactly
-- the same code as a live one.
local M = {}

---@class agent_lsp.ClientState
---@field id integer
---@field root string
---@field current string|nil   session shown in the chat buffer
---@field chat_buf integer|nil
---@field sessions table<string, boolean>

---@class agent_lsp.Session
---@field id string
---@field client_id integer
---@field events table[]        durable events, in seq order
---@field last_seq integer
---@field status "idle"|"running"
---@field inbox {next_turn: table[], next_step: table[]}
---@field turn integer
---@field usage table|nil       usage of the last model call
---@field turn_usage {input: integer, output: integer}
---@field session_usage table|nil the session's tokens and estimated cost at its last turn's end
---@field context_window integer|nil
---@field fixed_tokens integer|nil the system prompt and tools every request carries (request/context fixedTokens)
---@field model string|nil
---@field held_by {pid: integer|nil}|nil  set while another agent-lsp process has it open (read-only here)
---@field windows integer|nil  on the agent host: how many windows have it open (agent/session/presence)
---@field replay_held table[]|nil  live events waiting while a paged replay draws the session

---@type table<integer, agent_lsp.ClientState>
M.clients = {}
---@type table<string, agent_lsp.Session>
M.sessions = {}

local listeners = {}

--- Subscribe to changes: fn(kind, session, payload). kind is "events" (payload =
--- the new events), "reset" (the session's events were replaced), "status", "inbox".
---@return fun() unsubscribe
function M.subscribe(fn)
  listeners[fn] = true
  return function()
    listeners[fn] = nil
  end
end

local function emit(kind, session, payload)
  for fn in pairs(listeners) do
    local ok, err = pcall(fn, kind, session, payload)
    if not ok then
      vim.schedule(function()
        vim.notify("agent_lsp: " .. tostring(err), vim.log.levels.ERROR)
      end)
    end
  end
end

---@return agent_lsp.ClientState
function M.client(client_id, root)
  local c = M.clients[client_id]
  if not c then
    c = { id = client_id, root = root, sessions = {} }
    M.clients[client_id] = c
  end
  return c
end

---@return agent_lsp.Session
function M.session(session_id, client_id)
  local s = M.sessions[session_id]
  if not s then
    s = {
      id = session_id,
      client_id = client_id,
      events = {},
      last_seq = -1,
      status = "idle",
      inbox = { next_turn = {}, next_step = {} },
      turn = 0,
      turn_usage = { input = 0, output = 0 },
    }
    M.sessions[session_id] = s
    if client_id and M.clients[client_id] then
      M.clients[client_id].sessions[session_id] = true
    end
  end
  return s
end

-- Facts the status line and winbar show, folded from durable events.
local function fold(s, ev)
  local data = ev.data or {}
  if ev.type == "turn/start" then
    s.turn = data.turn or (s.turn + 1)
    s.turn_usage = { input = 0, output = 0 }
  elseif ev.type == "assistant/message" then
    if type(data.usage) == "table" then
      s.usage = data.usage
      s.turn_usage.input = s.turn_usage.input + (data.usage.inputTokens or 0)
      s.turn_usage.output = s.turn_usage.output + (data.usage.outputTokens or 0)
    end
    local msg = data.message or {}
    s.model = msg.model or s.model
  elseif ev.type == "turn/end" then
    if type(data.sessionUsage) == "table" then
      s.session_usage = data.sessionUsage
    end
  elseif ev.type == "request/context" then
    s.context_window = data.contextWindow or s.context_window
    s.fixed_tokens = data.fixedTokens or s.fixed_tokens
    s.model = data.model or s.model
  end
end

--- The last seq an event covers: under load the server merges consecutive
--- text/reasoning deltas into one assistant/chunk spanning seq..lastSeq.
function M.end_seq(ev)
  return type(ev.lastSeq) == "number" and ev.lastSeq or ev.seq or -1
end

--- Record durable events (any order, duplicates ignored). Returns the new ones.
--- While a paged replay draws the session (agent_lsp.replay), they wait for it.
---@return table[]
function M.add_events(s, events)
  if s.replay_held then
    vim.list_extend(s.replay_held, events or {})
    return {}
  end
  return M.add_page(s, events)
end

--- Record durable events now (a replayed page, or live events): see add_events.
---@return table[]
function M.add_page(s, events)
  local fresh = {}
  local sorted = vim.list_extend({}, events or {})
  table.sort(sorted, function(a, b)
    return (a.seq or 0) < (b.seq or 0)
  end)
  for _, ev in ipairs(sorted) do
    if type(ev.seq) == "number" and ev.seq > s.last_seq then
      s.last_seq = M.end_seq(ev)
      s.events[#s.events + 1] = ev
      fold(s, ev)
      fresh[#fresh + 1] = ev
    end
  end
  if #fresh > 0 then
    emit("events", s, fresh)
  end
  return fresh
end

--- The JSON-RPC error of a request refused because another agent-lsp process
--- (another editor window on the same folder) has the session open.
M.SESSION_IN_USE = require("agent_lsp.protocol").SESSION_IN_USE_CODE

--- The holder named by an error, {pid = n|nil}, or nil for any other error.
function M.held_by_error(err)
  if type(err) ~= "table" or err.code ~= M.SESSION_IN_USE then
    return nil
  end
  local pid = type(err.data) == "table" and err.data.pid or nil
  return { pid = type(pid) == "number" and pid > 0 and pid or nil }
end

--- Mark a session read-only here (held_by = {pid}) or ours again (nil).
function M.set_held(s, held_by)
  s.held_by = held_by
  emit("status", s, s.status)
end

--- The one line that says why a session is read-only and how to go on.
function M.held_notice(s)
  local pid = s and s.held_by and s.held_by.pid
  local where = pid and ("another window (pid %d)"):format(pid) or "another window"
  return ("session is open in %s — read-only here; :AgentNew starts a new session to continue"):format(where)
end

--- Replace a session's events with a full replay (agent/session/load).
function M.reset_events(s, events, status, inbox)
  -- Keep live events that arrived before the load reply and are newer than it.
  local newest = -1
  for _, ev in ipairs(events or {}) do
    newest = math.max(newest, M.end_seq(ev))
  end
  local sorted = vim.list_extend({}, events or {})
  for _, ev in ipairs(s.events) do
    if ev.seq > newest then
      sorted[#sorted + 1] = ev
    end
  end
  s.events, s.last_seq, s.turn, s.usage, s.session_usage = {}, -1, 0, nil, nil
  s.turn_usage = { input = 0, output = 0 }
  table.sort(sorted, function(a, b)
    return (a.seq or 0) < (b.seq or 0)
  end)
  for _, ev in ipairs(sorted) do
    if type(ev.seq) == "number" and ev.seq > s.last_seq then
      s.last_seq = M.end_seq(ev)
      s.events[#s.events + 1] = ev
      fold(s, ev)
    end
  end
  if status then
    s.status = status
  end
  if inbox then
    s.inbox = { next_turn = inbox.nextTurn or {}, next_step = inbox.nextStep or {} }
  end
  emit("reset", s, s.events)
end

function M.set_status(s, status)
  if s.status ~= status then
    s.status = status
    emit("status", s, status)
  end
end

local function remove_message(list, id)
  for i = #list, 1, -1 do
    if list[i].id == id then
      table.remove(list, i)
      return true
    end
  end
  return false
end

--- Live inbox notifications: action is "inserted", "discarded" or "claimed".
function M.inbox_change(s, action, params)
  local msg = params.message or {}
  if action == "inserted" then
    local list = params.target == "next-step" and s.inbox.next_step or s.inbox.next_turn
    remove_message(list, msg.id)
    list[#list + 1] = msg
  else
    if not remove_message(s.inbox.next_turn, msg.id) then
      remove_message(s.inbox.next_step, msg.id)
    end
  end
  emit("inbox", s, params)
end

function M.queued_count(s)
  -- the user's messages only: a note for the model (what the user undid in review) is not theirs to wait on
  local n = 0
  for _, list in ipairs({ s.inbox.next_turn, s.inbox.next_step }) do
    for _, m in ipairs(list) do
      if m.source == nil or m.source == "user" then
        n = n + 1
      end
    end
  end
  return n
end

--- Forget a client and its sessions (the server exited).
function M.drop_client(client_id)
  local c = M.clients[client_id]
  if not c then
    return
  end
  for sid in pairs(c.sessions) do
    local s = M.sessions[sid]
    if s then
      s.status = "idle"
    end
  end
  M.clients[client_id] = nil
end

return M
