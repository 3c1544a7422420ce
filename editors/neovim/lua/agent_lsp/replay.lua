-- Redraw a stored session page by page (agent/session/replay).
--
-- The first page replaces what the session showed (state.reset_events, the
-- "reset" a load gives); every later page is added as live events are
-- (state.add_page, the "events" the renderer draws as they stream), so the
-- chat grows progressively and ends exactly as it looked live. Pages come in
-- seq order with streamed deltas merged, the form live notifications take
-- under load. Live events of the session that arrive while paging wait in
-- `s.replay_held` and are added once the last page is in (duplicates drop
-- by seq). A server without agent/session/replay gets agent/session/load.
local state = require("agent_lsp.state")
local client_mod = require("agent_lsp.client")
local methods = require("agent_lsp.protocol").METHODS

local M = {}

--- Events asked for per page.
M.PAGE = 200

--- Replay `session_id` from the start. `on_first(s, result)` runs before the
--- first page is drawn (show the chat buffer there); `on_done(err, s, result)`
--- after the last (err: the failed request's error).
function M.run(client, session_id, on_first, on_done)
  local s = state.session(session_id, client.id)
  s.replay_held = s.replay_held or {}
  local started = false

  local function finish(err, result)
    local held = s.replay_held or {}
    s.replay_held = nil
    state.add_events(s, held)
    if result then
      state.set_status(s, result.status)
      if result.inbox then
        s.inbox = { next_turn = result.inbox.nextTurn or {}, next_step = result.inbox.nextStep or {} }
      end
    end
    on_done(err, s, result)
  end

  local function first(result)
    started = true
    -- what the session showed (an earlier load, live events) is redrawn from the pages
    vim.list_extend(s.replay_held, s.events)
    s.events = {}
    on_first(s, result)
    state.reset_events(s, result.events or {}, result.status, result.inbox)
  end

  local function page(seq)
    local params = { sessionId = session_id, seq = seq, limit = M.PAGE }
    client_mod.request(client, methods["agent/session/replay"], params, function(err, result)
      if err and not started and err.code == vim.lsp.protocol.ErrorCodes.MethodNotFound then
        return client_mod.request(client, methods["agent/session/load"], { sessionId = session_id }, function(load_err, loaded)
          if load_err then
            return finish(load_err, nil)
          end
          first(loaded)
          finish(nil, loaded)
        end)
      end
      if err then
        return finish(err, nil)
      end
      if not started then
        first(result)
      else
        state.add_page(s, result.events or {})
      end
      if result.nextSeq < result.endSeq then
        return page(result.nextSeq)
      end
      finish(nil, result)
    end)
  end
  page(0)
end

--- Whether a paged replay of the session is still drawing it.
function M.running(s)
  return s ~= nil and s.replay_held ~= nil
end

return M
