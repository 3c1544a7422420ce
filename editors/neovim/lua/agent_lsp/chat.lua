-- The chat buffer: one per server client (workspace), showing the client's
-- current session as a markdown transcript, with its status in the winbar.
local M = {}

local api = vim.api
local config = require("agent_lsp.config")
local state = require("agent_lsp.state")
local render = require("agent_lsp.render")

local WINBAR = "%{%v:lua.require'agent_lsp.chat'.winbar()%}"
-- Events that change what the winbar shows.
local WINBAR_EVENTS = { ["turn/start"] = true, ["turn/end"] = true, ["assistant/message"] = true, ["request/context"] = true }

local function renderer_opts()
  return { max_tool_lines = config.options.chat.max_tool_lines }
end

local function set_window_options(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldcolumn = "0"
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'agent_lsp.render'.foldexpr()"
  wo.foldtext = ""
  wo.foldlevel = 0
  wo.foldminlines = 0 -- a running tool's one-line section is a fold too: it keeps its state
  wo.foldenable = true
  wo.winbar = WINBAR
  wo.conceallevel = 2
  wo.fillchars = "fold: ,eob: "
end

local function map_keys(buf)
  local keys = config.options.chat.keymaps or {}
  local function map(lhs, rhs, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("n", lhs, rhs, { buffer = buf, silent = true, nowait = true, desc = desc })
    end
  end
  map(keys.cancel, "<Plug>(AgentCancel)", "agent_lsp: cancel the running turn")
  map(keys.ask, "<Plug>(AgentAsk)", "agent_lsp: ask the agent")
  map(keys.diff, "<Cmd>AgentDiff<CR>", "agent_lsp: show the diff of the edit under the cursor")
  map(keys.close, "<Cmd>close<CR>", "agent_lsp: close the chat window")
end

--- The chat buffer of a client (created on first use).
---@param c agent_lsp.ClientState
---@return integer buf
function M.buffer(c)
  if c.chat_buf and api.nvim_buf_is_valid(c.chat_buf) then
    return c.chat_buf
  end
  local buf = api.nvim_create_buf(false, true)
  local name = "agent-lsp://" .. vim.fs.basename(c.root or "chat")
  if vim.fn.bufnr(name) ~= -1 then
    name = name .. "#" .. c.id
  end
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].undolevels = -1
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "markdown"
  -- Vim's markdown syntax, code fences in their language; tree-sitter's when
  -- chat.highlight says so (agent_lsp.chat_highlight says why not by default).
  require("agent_lsp.chat_highlight").start(buf, config.options.chat.highlight)
  vim.b[buf].agent_lsp_client = c.id
  vim.b[buf].agent_lsp_chat = true
  map_keys(buf)
  api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    callback = function()
      set_window_options(api.nvim_get_current_win())
    end,
  })
  c.chat_buf = buf
  local r = render.for_buffer(buf, renderer_opts())
  local s = c.current and state.sessions[c.current]
  if s then
    r:render(s.events)
  end
  return buf
end

local function open_window(buf, focus)
  local opts = config.options.chat
  local pos = opts.position
  if pos == "tab" then
    local prev = api.nvim_get_current_win()
    vim.cmd("tab sbuffer " .. buf)
    local win = api.nvim_get_current_win()
    if not focus then
      api.nvim_set_current_win(prev)
    end
    return win
  end
  local vertical = pos == "right" or pos == "left"
  local size = opts.size or 0.4
  if size < 1 then
    size = math.floor((vertical and vim.o.columns or vim.o.lines) * size)
  end
  local cfg = { split = pos == "top" and "above" or pos == "bottom" and "below" or pos, win = -1 }
  if vertical then
    cfg.width = math.max(size, 20)
  else
    cfg.height = math.max(size, 5)
  end
  local win = api.nvim_open_win(buf, focus == true, cfg)
  set_window_options(win)
  return win
end

--- Show the chat of a client (opening its window if needed).
---@param c agent_lsp.ClientState
---@param focus boolean|nil
---@return integer win
function M.open(c, focus)
  local buf = M.buffer(c)
  local win = vim.fn.win_findbuf(buf)[1]
  if not win then
    win = open_window(buf, focus)
    -- Start at the end: the window follows new text while its cursor is there.
    api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
  elseif focus then
    api.nvim_set_current_win(win)
  end
  return win
end

--- Put the cursor of every chat window at the end, so that they follow what comes next.
function M.follow(c)
  if c.chat_buf and api.nvim_buf_is_valid(c.chat_buf) then
    local last = api.nvim_buf_line_count(c.chat_buf)
    for _, win in ipairs(vim.fn.win_findbuf(c.chat_buf)) do
      api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

function M.close(c)
  if c.chat_buf then
    for _, win in ipairs(vim.fn.win_findbuf(c.chat_buf)) do
      if #api.nvim_list_wins() > 1 then
        api.nvim_win_close(win, false)
      end
    end
  end
end

function M.toggle(c)
  if c.chat_buf and #vim.fn.win_findbuf(c.chat_buf) > 0 then
    M.close(c)
  else
    M.open(c, false)
  end
end

--- Make `s` the client's current session and show its whole transcript.
function M.set_session(c, s)
  c.current = s and s.id or nil
  if c.chat_buf and api.nvim_buf_is_valid(c.chat_buf) then
    local r = render.for_buffer(c.chat_buf, renderer_opts())
    r:reset()
    if s then
      r:render(s.events)
    end
  end
  vim.cmd("redrawstatus!")
end

function M.is_visible(s)
  local c = state.clients[s.client_id]
  return c ~= nil and c.current == s.id and c.chat_buf ~= nil and #vim.fn.win_findbuf(c.chat_buf) > 0
end

--- The renderer of the chat showing `s`, if it shows it now.
function M.renderer_of(s)
  local c = state.clients[s.client_id]
  if c and c.current == s.id and c.chat_buf and api.nvim_buf_is_valid(c.chat_buf) then
    return render.for_buffer(c.chat_buf, renderer_opts())
  end
end

function M.tool_progress(s, callId, data)
  local c = state.clients[s.client_id]
  if c and c.current == s.id and c.chat_buf and api.nvim_buf_is_valid(c.chat_buf) then
    render.for_buffer(c.chat_buf, renderer_opts()):tool_progress(callId, data)
  end
end

function M.client_gone(c)
  if c.chat_buf and api.nvim_buf_is_valid(c.chat_buf) then
    vim.schedule(function()
      vim.cmd("redrawstatus!")
    end)
  end
end

-- Keep chat buffers in step with the sessions they show.
state.subscribe(function(kind, s, payload)
  local c = state.clients[s.client_id]
  if not c or c.current ~= s.id or not c.chat_buf or not api.nvim_buf_is_valid(c.chat_buf) then
    if kind == "status" or kind == "inbox" then
      vim.cmd("redrawstatus!")
    end
    return
  end
  local r = render.for_buffer(c.chat_buf, renderer_opts())
  local redraw = kind ~= "events"
  if kind == "events" then
    r:render(payload)
    for _, ev in ipairs(payload) do
      redraw = redraw or WINBAR_EVENTS[ev.type] ~= nil
    end
  elseif kind == "reset" then
    r:reset()
    r:render(payload)
  end
  if redraw then
    vim.cmd("redrawstatus!")
  end
end)

local function human(n)
  if not n then
    return "?"
  end
  local function short(x, unit)
    local s = ("%.1f"):format(x):gsub("%.0$", "")
    return s .. unit
  end
  if n >= 1000000 then
    return short(n / 1000000, "M")
  elseif n >= 1000 then
    return short(n / 1000, "k")
  end
  return tostring(n)
end

--- The winbar text of a chat window: status, turn, context use, tokens, queue.
function M.winbar_text(s)
  if not s then
    return " agent_lsp: no session yet"
  end
  local parts
  if s.held_by then
    -- "running" would be the other window's turn: nothing streams here
    parts = { s.held_by.pid and (" read-only (open in pid %d)"):format(s.held_by.pid) or " read-only (open elsewhere)" }
    if s.held_read_at then -- agent_lsp.held_follow reads it on
      parts[1] = parts[1] .. os.date(" as of %H:%M:%S", s.held_read_at) .. (s.held_running and ", running there" or "")
    end
  else
    parts = { s.status == "running" and " ● running" or " idle" }
    if require("agent_lsp.permissions").is_waiting(s) then
      parts = { " ⏸ waiting for you" }
    end
  end
  if (s.windows or 1) > 1 then -- on the agent host: open in other windows too
    parts[#parts + 1] = ("%d windows"):format(s.windows)
  end
  if s.turn > 0 then
    parts[#parts + 1] = "turn " .. s.turn
  end
  -- Before the first answer, the fixed part the first request carries (system prompt and tools).
  local fixed = s.fixed_tokens and (" fixed %s"):format(human(s.fixed_tokens)) or ""
  if s.usage or s.fixed_tokens then
    local used = s.usage and (s.usage.inputTokens or 0) + (s.usage.outputTokens or 0) or s.fixed_tokens
    if s.context_window then
      parts[#parts + 1] = ("ctx %s/%s %d%%%s"):format(
        human(used),
        human(s.context_window),
        math.floor(used * 100 / s.context_window + 0.5),
        fixed
      )
    else
      parts[#parts + 1] = "ctx " .. human(used) .. fixed
    end
  end
  -- Tokens of the current turn; none yet (it just started, or failed before any reply) shows nothing.
  if s.turn_usage.input + s.turn_usage.output > 0 then
    parts[#parts + 1] = ("↑%s ↓%s"):format(human(s.turn_usage.input), human(s.turn_usage.output))
  end
  if require("agent_lsp.plan").mode_of(s) == "plan" then
    parts[#parts + 1] = "plan mode"
  end
  local total = require("agent_lsp.usage").winbar_part(s.session_usage, human)
  if total then
    parts[#parts + 1] = total
  end
  local queued = state.queued_count(s)
  if queued > 0 then
    parts[#parts + 1] = queued .. " queued"
  end
  return table.concat(parts, " │ ")
end

function M.winbar()
  local win = vim.g.statusline_winid or api.nvim_get_current_win()
  local buf = api.nvim_win_get_buf(win)
  local c = state.clients[vim.b[buf].agent_lsp_client or -1]
  if not c then
    return " agent_lsp · server stopped"
  end
  local text = M.winbar_text(c.current and state.sessions[c.current])
  -- Truncate on the right when the window is narrow.
  return (text:gsub("%%", "%%%%")) .. "%<"
end

return M
