-- Session control from Neovim: rewind and fork at a turn, and the queue's
-- actions (edit, move to the top, steer now, send now, remove, pause).
--
--   :AgentRewind[!] [turn]   cut the history back to before the turn (default: the
--                            one under the cursor in the chat, else the last); with !
--                            the files the rewound turns changed are reverted too
--   :AgentFork [turn]        a new session sharing the history up to the end of the
--                            turn (default as for :AgentRewind); the chat shows it
--   :AgentQueueEdit          choose a queued message, then what to do with it
--   :AgentQueuePause / :AgentQueueResume
local M = {}

local state = require("agent_lsp.state")
local client_mod = require("agent_lsp.client")
local methods = require("agent_lsp.protocol").METHODS

local function notify(msg, level)
  vim.notify("agent_lsp: " .. msg, level or vim.log.levels.INFO)
end

local function failed(what, err)
  local text = type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
  notify(("%s failed: %s"):format(what, text), vim.log.levels.ERROR)
end

local function with_session(fn)
  local commands = require("agent_lsp.commands")
  local client, c = commands.context()
  local s = c and c.current and state.sessions[c.current] or nil
  if not client or not s then
    return notify("no agent session yet: ask something with :AgentAsk", vim.log.levels.WARN)
  end
  fn(client, c, s)
end

--- The turn a command means: its number, else the turn under the cursor in
--- the chat, else the last one.
local function turn_arg(opts, c, s)
  local turn = tonumber(opts and opts.args or "")
  if not turn and c.chat_buf and vim.api.nvim_get_current_buf() == c.chat_buf then
    local r = require("agent_lsp.render").get(c.chat_buf)
    turn = r and r:turn_near(vim.api.nvim_win_get_cursor(0)[1] - 1)
  end
  turn = turn or s.turn
  if not turn or turn < 1 then
    return nil
  end
  return turn
end

local function text_of(message)
  local parts = {}
  for _, block in ipairs(type(message.content) == "table" and message.content or {}) do
    if block.type == "text" and type(block.text) == "string" and not block.text:find("^<context>") then
      parts[#parts + 1] = block.text
    end
  end
  return table.concat(parts, "\n")
end

--- :AgentRewind[!] [turn]
function M.rewind(opts)
  with_session(function(client, c, s)
    local turn = turn_arg(opts, c, s)
    if not turn then
      return notify("no turn to rewind to", vim.log.levels.WARN)
    end
    local params = { sessionId = s.id, turn = turn, revertFiles = opts and opts.bang or false }
    client_mod.request(client, methods["agent/session/rewind"], params, function(err, result)
      if err then
        return failed("rewind", err)
      end
      local lines = { ("rewound to before turn %d"):format(turn) }
      for _, r in ipairs(result.reverts or {}) do
        for _, path in ipairs(r.reverted or {}) do
          lines[#lines + 1] = ("  turn %d: reverted %s"):format(r.turn, vim.fn.fnamemodify(path, ":~:."))
        end
        for _, skip in ipairs(r.skipped or {}) do
          lines[#lines + 1] = ("  turn %d: skipped %s: %s"):format(r.turn, vim.fn.fnamemodify(skip.path or "?", ":~:."), skip.reason or "")
        end
      end
      notify(table.concat(lines, "\n"))
    end)
  end)
end

--- :AgentFork [turn]
function M.fork(opts)
  with_session(function(client, c, s)
    local turn = turn_arg(opts, c, s)
    if not turn then
      return notify("no turn to fork at", vim.log.levels.WARN)
    end
    client_mod.request(client, methods["agent/session/fork"], { sessionId = s.id, turn = turn }, function(err, result)
      if err then
        return failed("fork", err)
      end
      require("agent_lsp.commands").load(client, c, result.sessionId)
      notify(("forked at turn %d"):format(turn))
    end)
  end)
end

local function request(client, method, params, what, done)
  client_mod.request(client, method, params, function(err, result)
    if err then
      return failed(what, err)
    end
    if done then
      done(result)
    end
  end)
end

local ACTIONS = { "Edit", "Move to the top", "Steer now", "Send now", "Remove" }

--- :AgentQueueEdit — choose a queued message, then an action.
function M.queue_edit()
  with_session(function(client, _, s)
    local items = {}
    for _, m in ipairs(s.inbox.next_step) do
      items[#items + 1] = { label = "steer: " .. text_of(m), message = m }
    end
    for _, m in ipairs(s.inbox.next_turn) do
      items[#items + 1] = { label = "queued: " .. text_of(m), message = m }
    end
    if #items == 0 then
      return notify("nothing queued")
    end
    local format = function(item)
      return item.label
    end
    vim.ui.select(items, { prompt = "agent_lsp: queued message", kind = "agent_lsp_queue", format_item = format }, function(item)
      if not item then
        return
      end
      local id = item.message.id
      vim.ui.select(ACTIONS, { prompt = "agent_lsp: " .. item.label, kind = "agent_lsp_queue_action" }, function(action)
        if action == "Edit" then
          vim.ui.input({ prompt = "Message: ", default = text_of(item.message) }, function(text)
            if text and text ~= "" then
              request(client, methods["agent/inbox/update"], { sessionId = s.id, messageId = id, content = text }, "edit")
            end
          end)
        elseif action == "Move to the top" then
          request(client, methods["agent/inbox/move"], { sessionId = s.id, messageId = id, to = "next-turn", index = 0 }, "move")
        elseif action == "Steer now" then
          request(client, methods["agent/inbox/move"], { sessionId = s.id, messageId = id, to = "next-step" }, "steer")
        elseif action == "Send now" then
          request(client, methods["agent/inbox/move"], { sessionId = s.id, messageId = id, to = "now" }, "send now")
        elseif action == "Remove" then
          request(client, methods["agent/inbox/remove"], { sessionId = s.id, messageId = id }, "remove")
        end
      end)
    end)
  end)
end

local function set_paused(paused)
  with_session(function(client, _, s)
    request(client, methods["agent/inbox/pause"], { sessionId = s.id, paused = paused }, paused and "pause" or "resume", function()
      notify(paused and "queue paused" or "queue resumed")
    end)
  end)
end

function M.queue_pause()
  set_paused(true)
end

function M.queue_resume()
  set_paused(false)
end

--- `agent/inbox/changed`: the server's lists after an edit replace ours.
function M.on_inbox_changed(s, params)
  s.inbox.next_turn = type(params.nextTurn) == "table" and params.nextTurn or {}
  s.inbox.next_step = type(params.nextStep) == "table" and params.nextStep or {}
  s.inbox.paused = params.paused == true
  state.inbox_change(s, "changed", {})
end

return M
