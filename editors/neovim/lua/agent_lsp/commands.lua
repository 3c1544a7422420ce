-- The :Agent* commands. Each takes the user-command `opts` table (args, range,
-- line1, line2, fargs) so the Lua API and the Ex commands share one path.
local M = {}

local api = vim.api
local config = require("agent_lsp.config")
local state = require("agent_lsp.state")
local client_mod = require("agent_lsp.client")
local chat = require("agent_lsp.chat")
local methods = require("agent_lsp.protocol").METHODS

local function notify(msg, level)
  vim.notify("agent_lsp: " .. msg, level or vim.log.levels.INFO)
end

local function err_text(err)
  return type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
end

--- One WARN line for a session another window holds (read-only here).
local function notify_held(s)
  notify(state.held_notice(s), vim.log.levels.WARN)
end

--- Report a failed request: a -32010 marks the session read-only and says so
--- in one line; anything else is an error naming what failed.
local function report(what, err, s)
  local held = state.held_by_error(err)
  if held then
    if s then
      state.set_held(s, held)
    end
    return notify_held(s or { held_by = held })
  end
  notify(("%s failed: %s"):format(what, err_text(err)), vim.log.levels.ERROR)
end

--- The agent client of the current buffer and its state; starts the server if needed.
---@return vim.lsp.Client|nil, agent_lsp.ClientState|nil
function M.context()
  require("agent_lsp").ensure_setup()
  local client = client_mod.for_buffer(0)
  if not client then
    return nil, nil
  end
  return client, state.client(client.id, client.config.root_dir)
end

local function current_session(c)
  return c and c.current and state.sessions[c.current] or nil
end

-- Column conversion for LSP positions in the client's encoding.
local function utf_col(line, byte, encoding)
  byte = math.min(byte, #line)
  if encoding == "utf-8" then
    return byte
  end
  if vim.fn.has("nvim-0.11") == 1 then
    return vim.str_utfindex(line, encoding, byte, false)
  end
  local u32, u16 = vim.str_utfindex(line, byte)
  return encoding == "utf-32" and u32 or u16
end

--- The selection given by a command range as a ContextItem, or nil.
--- A charwise visual selection keeps its columns; any other range is whole lines.
function M.selection_context(opts, encoding)
  if not opts or (opts.range or 0) == 0 then
    return nil
  end
  local buf = api.nvim_get_current_buf()
  local name = api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" then
    return nil
  end
  local l1, l2 = opts.line1, opts.line2
  local lines = api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
  local range
  local vs, ve = api.nvim_buf_get_mark(buf, "<"), api.nvim_buf_get_mark(buf, ">")
  if vim.fn.visualmode() == "v" and vs[1] == l1 and ve[1] == l2 and #lines > 0 then
    local last = lines[#lines]
    local end_byte = math.min(ve[2], math.max(#last - 1, 0))
    -- '> points at the first byte of the last selected character.
    local char_len = #vim.fn.strcharpart(last:sub(end_byte + 1), 0, 1)
    end_byte = math.min(end_byte + math.max(char_len, 1), #last)
    local first = lines[1]
    range = {
      start = { line = l1 - 1, character = utf_col(first, vs[2], encoding) },
      ["end"] = { line = l2 - 1, character = utf_col(last, end_byte, encoding) },
    }
    lines[#lines] = last:sub(1, end_byte)
    lines[1] = lines[1]:sub(vs[2] + 1)
  else
    range = { start = { line = l1 - 1, character = 0 }, ["end"] = { line = l2, character = 0 } }
  end
  return {
    kind = "selection",
    uri = vim.uri_from_bufnr(buf),
    range = range,
    text = table.concat(lines, "\n"),
  }
end

-- Show `s` in the client's chat (and open it when configured to).
local function show(c, s, open)
  if c.current ~= s.id then
    chat.set_session(c, s)
  end
  if open and config.options.chat.auto_open then
    chat.open(c, false)
  end
end

--- Send a message: method is "agent/followup" or "agent/steer".
local function send(client, c, method, text, context, retried)
  local s = current_session(c)
  local images = require("agent_lsp.images")
  local params = { content = images.content(c, text), context = context }
  if s then
    params.sessionId = s.id
  else
    params.workspaceUri = client_mod.workspace_uri(client)
  end
  if method == methods["agent/steer"] and not s then
    method = methods["agent/followup"]
  end
  if s and s.held_by then
    return notify_held(s) -- the server would refuse it (-32010): say why without asking
  end
  client_mod.request(client, method, params, function(err, result)
    if err then
      -- The shown session is gone (deleted, or another server): start a new one.
      if s and not retried and tostring(err.message or ""):find("unknown session", 1, true) then
        c.current = nil
        return send(client, c, methods["agent/followup"], text, context, true)
      end
      return report(method, err, s) -- attached images stay attached: remove them or send again
    end
    images.sent(c)
    show(c, state.session(result.sessionId, client.id), true)
    -- The user just sent something: the chat shows it and follows the answer.
    chat.follow(c)
  end)
end

M.send = send -- for commands of their own modules (fix.lua)
M.show = show -- (skills.lua)

--- Show the session a command of another module queued a message in (mcp_prompts.lua).
function M.show(c, s)
  show(c, s, true)
  chat.follow(c)
end

local function ask_or_input(opts, method, title)
  local client, c = M.context()
  if not client or not c then
    return
  end
  local context = M.selection_context(opts, client.offset_encoding)
  local origin = vim.api.nvim_get_current_buf()
  local mentions = require("agent_lsp.mentions")
  local function contexts(text) -- the selection, then what the text's @file / #buffer name
    return mentions.context(context, text, origin, c.root)
  end
  local s = current_session(c)
  if s and s.held_by then
    return notify_held(s) -- no input window for a message that cannot be sent
  end
  local text = opts and opts.args or ""
  if vim.trim(text) ~= "" then
    return send(client, c, method, text, contexts(text))
  end
  local attached = require("agent_lsp.images").describe(require("agent_lsp.images").pending(c))
  local buf = require("agent_lsp.input").open({
    title = attached ~= "" and (title .. " · " .. attached) or title,
    on_submit = function(input)
      send(client, c, method, input, contexts(input))
    end,
  })
  mentions.attach(buf, c.root, origin)
end

--- :AgentAsk [text] — a followup (queued when a turn runs); a range attaches the selection.
function M.ask(opts)
  ask_or_input(opts, methods["agent/followup"], "Ask the agent")
end

--- :AgentSteer [text] — a message the running turn takes at its next step.
function M.steer(opts)
  ask_or_input(opts, methods["agent/steer"], "Steer the agent")
end

local function with_session(fn)
  local client, c = M.context()
  local s = current_session(c)
  if not client or not s then
    return notify("no agent session yet: ask something with :AgentAsk", vim.log.levels.WARN)
  end
  fn(client, c, s)
end

--- :AgentCancel — stop the running turn (queued messages are dropped too).
function M.cancel()
  with_session(function(client, _, s)
    -- Sent even when the session looks idle: a turn just asked for may not have reported yet.
    local idle = s.status ~= "running" and state.queued_count(s) == 0
    client_mod.request(client, methods["agent/cancel"], { sessionId = s.id }, function(err)
      if err then
        report("cancel", err, s)
      elseif idle then
        notify("no turn is running")
      end
    end)
  end)
end

local function preview(msg)
  local text = ""
  for _, block in ipairs(type(msg.content) == "table" and msg.content or {}) do
    if block.type == "text" then
      text = text .. (block.text or "")
    end
  end
  if type(msg.content) == "string" then
    text = msg.content
  end
  return (text:gsub("%s+", " "))
end

--- :AgentQueue — the messages waiting for the agent; choosing one removes it.
function M.queue()
  with_session(function(client, _, s)
    local items = {}
    for _, m in ipairs(s.inbox.next_step) do
      items[#items + 1] = { label = "steer: " .. preview(m), message = m }
    end
    for _, m in ipairs(s.inbox.next_turn) do
      items[#items + 1] = { label = "queued: " .. preview(m), message = m }
    end
    if #items == 0 then
      return notify("nothing queued")
    end
    vim.ui.select(items, {
      prompt = "agent_lsp: queued messages (choose one to remove it)",
      kind = "agent_lsp_queue",
      format_item = function(item)
        return item.label
      end,
    }, function(item)
      if not item then
        return
      end
      client_mod.request(
        client,
        methods["agent/inbox/remove"],
        { sessionId = s.id, messageId = item.message.id },
        function(err, result)
          if err then
            return report("remove", err, s)
          end
          if result and result.removed then
            state.inbox_change(s, "discarded", { message = item.message })
            notify(("removed from the queue: %s"):format(preview(item.message)))
          else
            notify(("already taken by the agent: %s"):format(preview(item.message)), vim.log.levels.WARN)
          end
        end
      )
    end)
  end)
end

--- :AgentNew — a fresh session in the chat.
function M.new()
  local client, c = M.context()
  if not client or not c then
    return
  end
  client_mod.request(client, methods["agent/session/new"], { workspaceUri = client_mod.workspace_uri(client) }, function(err, result)
    if err then
      return notify("new session failed: " .. err_text(err), vim.log.levels.ERROR)
    end
    show(c, state.session(result.sessionId, client.id), true)
  end)
end

--- Load a stored session and show it, exactly as it was rendered live, page by page.
function M.load(client, c, session_id, cb)
  require("agent_lsp.replay").run(client, session_id, function(s, result)
    c.sessions[s.id] = true
    c.current = s.id
    chat.buffer(c)
    -- heldByPid: a read-only snapshot of a session another window has open (0: pid unknown)
    local held = result.heldByPid
    s.held_by = type(held) == "number" and { pid = held > 0 and held or nil } or nil
    if config.options.chat.auto_open then
      chat.open(c, false) -- the pages draw into it as they come
    end
  end, function(err, s)
    if err then
      return notify("resume failed: " .. err_text(err), vim.log.levels.ERROR)
    end
    if s.held_by then
      notify_held(s)
      require("agent_lsp.held_follow").start(client, c, s, s.status == "running")
    end
    if cb then
      cb(s)
    end
  end)
end

local function format_session(item, shown)
  local when = item.updatedAt and os.date("%Y-%m-%d %H:%M", math.floor(item.updatedAt / 1000)) or ""
  local title = item.title and item.title ~= "" and item.title or "(untitled)"
  local turns = item.turns or 0
  local notes = { turns == 1 and "1 turn" or (turns .. " turns") }
  if item.status == "running" then
    notes[#notes + 1] = "running"
  end
  if shown then
    notes[#notes + 1] = "shown"
  end
  -- a sub-agent's session, listed right under its parent's (subagents.nest)
  local indent = item.parentToolCallId and "  ↳ sub-agent: " or ""
  -- listed for a query: what was said there that matched
  local excerpt = item.excerpt and item.excerpt ~= "" and ("  “%s”"):format(item.excerpt) or ""
  return ("%s%s  %s  [%s]%s"):format(indent, when, title, table.concat(notes, ", "), excerpt)
end

--- `query`: only the sessions with its words in their title or messages (the server searches their text).
local function pick_session(client, c, prompt, cb, query)
  local params = { workspaceUri = client_mod.workspace_uri(client) }
  if query and query ~= "" then
    params.query = query
    prompt = ("%s matching %q"):format(prompt, query)
  end
  client_mod.request(client, methods["agent/session/list"], params, function(err, result)
    if err then
      return notify("listing sessions failed: " .. err_text(err), vim.log.levels.ERROR)
    end
    local sessions = require("agent_lsp.subagents").nest(result and result.sessions or {})
    if #sessions == 0 then
      if params.query then
        return notify(("no session of this workspace mentions %q"):format(query))
      end
      return notify("no stored sessions in this workspace")
    end
    local function label(item)
      return format_session(item, item.sessionId == c.current)
    end
    vim.ui.select(sessions, { prompt = prompt, kind = "agent_lsp_session", format_item = label }, function(item)
      if item then
        cb(item)
      end
    end)
  end)
end

--- :AgentResume [id] — show a stored session (chosen with vim.ui.select without an id).
function M.resume(opts)
  local client, c = M.context()
  if not client or not c then
    return
  end
  local id = opts and vim.trim(opts.args or "") or ""
  if id ~= "" then
    return M.load(client, c, id)
  end
  pick_session(client, c, "agent_lsp: resume session", function(item)
    M.load(client, c, item.sessionId)
  end)
end

--- :AgentSessions [query] — choose a stored session (with a query: one whose title
--- or messages have its words), then resume or delete it.
function M.sessions(opts)
  local client, c = M.context()
  if not client or not c then
    return
  end
  local query = opts and vim.trim(opts.args or "") or ""
  pick_session(client, c, "agent_lsp: sessions", function(item)
    vim.ui.select({ "Resume", "Delete" }, { prompt = format_session(item) }, function(action)
      if action == "Resume" then
        M.load(client, c, item.sessionId)
      elseif action == "Delete" then
        client_mod.request(client, methods["agent/session/delete"], { sessionId = item.sessionId }, function(err)
          if err then
            return report("delete", err, state.sessions[item.sessionId])
          end
          if c.current == item.sessionId then
            chat.set_session(c, nil)
          end
          notify("deleted " .. format_session(item))
        end)
      end
    end)
  end, query)
end

--- :AgentRevert [turn] — undo the file edits of a turn (default: the last one).
function M.revert(opts)
  with_session(function(client, _, s)
    local turn = tonumber(opts and opts.args or "") or s.turn
    if not turn or turn < 1 then
      return notify("no turn to revert", vim.log.levels.WARN)
    end
    client_mod.request(client, methods["agent/turn/revert"], { sessionId = s.id, turn = turn }, function(err, result)
      if err then
        return report("revert", err, s)
      end
      local reverted, skipped = result.reverted or {}, result.skipped or {}
      if #reverted == 0 and #skipped == 0 then
        return notify(("turn %d made no file edits"):format(turn))
      end
      local paths = vim.tbl_map(function(path)
        return vim.fn.fnamemodify(path, ":~:.")
      end, reverted)
      -- One line when all went well (no hit-enter prompt); a line per skipped file otherwise.
      local lines = { ("reverted turn %d: %s"):format(turn, #paths > 0 and table.concat(paths, ", ") or "nothing") }
      for _, skip in ipairs(skipped) do
        lines[#lines + 1] = ("  skipped %s: %s"):format(vim.fn.fnamemodify(skip.path or "?", ":~:."), skip.reason or "")
      end
      notify(table.concat(lines, "\n"), #skipped > 0 and vim.log.levels.WARN or nil)
    end)
  end)
end

local function scratch(name, lines, filetype)
  local origin = api.nvim_get_current_win()
  vim.cmd("botright new")
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  -- `q` closes it and goes back to where it was opened from (the chat, for a diff).
  vim.keymap.set("n", "q", function()
    vim.cmd("close")
    if api.nvim_win_is_valid(origin) then
      api.nvim_set_current_win(origin)
    end
  end, { buffer = buf, silent = true, nowait = true, desc = "agent_lsp: close" })
  return buf
end

M.scratch = scratch -- for views of their own modules (mcp.lua)

--- :AgentLog [events|lsp] — the current session's event log as JSON lines, or Neovim's LSP log.
function M.log(opts)
  local what = opts and vim.trim(opts.args or "") or ""
  if what == "lsp" then
    vim.cmd("botright split " .. vim.fn.fnameescape(vim.lsp.get_log_path()))
    return
  end
  with_session(function(_, _, s)
    local lines = {}
    for _, ev in ipairs(s.events) do
      lines[#lines + 1] = vim.json.encode(ev)
    end
    scratch("agent-lsp://log/" .. s.id, lines, "json")
  end)
end

--- :AgentDiff — the diff of the agent edit under the cursor in the chat (else the latest).
function M.diff()
  local _, c = M.context()
  if not c or not c.chat_buf then
    return notify("no chat yet", vim.log.levels.WARN)
  end
  local r = require("agent_lsp.render").get(c.chat_buf)
  local row = 0
  if api.nvim_get_current_buf() == c.chat_buf then
    row = api.nvim_win_get_cursor(0)[1] - 1
  else
    row = api.nvim_buf_line_count(c.chat_buf)
  end
  local diff, path
  if r then
    diff, path = r:diff_near(row)
  end
  if not diff then
    return notify("no agent edit to show", vim.log.levels.WARN)
  end
  scratch("agent-lsp://diff/" .. (path or "edit"), vim.split(diff, "\n", { plain = true }), "diff")
end

--- :AgentChat — open or close the chat window.
function M.chat()
  local client, c = M.context()
  if client and c then
    chat.toggle(c)
  end
end

return M
