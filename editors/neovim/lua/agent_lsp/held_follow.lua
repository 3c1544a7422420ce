-- A session another window has open shows here read-only, as a snapshot of
-- its log. While the chat shows it, the log is read on from where the
-- snapshot ended (agent/session/replay): every 3 s while a turn runs there,
-- every 15 s otherwise. What that turn adds is drawn as live events are,
-- so its end shows here without resuming the session again; the winbar says
-- when the log was last read and whether a turn runs there. Once the other
-- window lets the session go, it is ours: the winbar says so at the next read.
local M = {}

local state = require("agent_lsp.state")
local client_mod = require("agent_lsp.client")
local methods = require("agent_lsp.protocol").METHODS

M.RUNNING_MS = 3000
M.IDLE_MS = 15000

---@type table<string, uv.uv_timer_t> session id -> its timer
local timers = {}

local function stop(session_id)
  local timer = timers[session_id]
  if timer then
    timers[session_id] = nil
    timer:stop()
    timer:close()
  end
end

--- One read of the held session `s` of `client` (shown in `c`'s chat).
local function read(client, c, s)
  if c.current ~= s.id or not s.held_by or client:is_stopped() then
    return stop(s.id)
  end
  local params = { sessionId = s.id, seq = s.last_seq + 1, limit = 200 }
  client_mod.request(client, methods["agent/session/replay"], params, function(err, result)
    if err or not result or c.current ~= s.id or not s.held_by then
      return
    end
    s.held_read_at = os.time()
    s.held_running = result.status == "running"
    state.add_events(s, result.events or {})
    state.set_status(s, result.status)
    if result.heldByPid == nil then
      state.set_held(s, nil) -- let go: ours to continue
      return stop(s.id)
    end
    state.set_held(s, s.held_by) -- the winbar: when it was read, whether a turn runs there
  end)
end

--- Follow the held session `s` while `c`'s chat shows it; `running`: whether a turn runs there.
function M.start(client, c, s, running)
  stop(s.id)
  s.held_read_at, s.held_running = os.time(), running
  local timer = assert(vim.uv.new_timer())
  timers[s.id] = timer
  local waited = 0
  timer:start(M.RUNNING_MS, M.RUNNING_MS, vim.schedule_wrap(function()
    waited = waited + M.RUNNING_MS
    if s.held_running or waited >= M.IDLE_MS then
      waited = 0
      read(client, c, s)
    end
  end))
end

M.stop = stop

return M
