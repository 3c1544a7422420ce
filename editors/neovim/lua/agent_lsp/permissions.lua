-- agent/permission: the agent asks before a risky action. By default the
-- question is drawn at the end of the chat buffer (virtual lines, so the
-- transcript under it is untouched) and, so that it is seen whatever the
-- folds and the scroll, in a floating card at the bottom of every chat window,
-- with one key per answer. A key pressed within `permissions.guard_ms` of the
-- question's appearing answers nothing (it was meant for something else),
-- and nothing blocks: the user may read the transcript, switch windows or answer with
-- :AgentPermission. With `permissions.ui = "select"` it goes through
-- vim.ui.select instead (any picker plugin that replaces it works too).
-- Either way only the answers the server honours (params.choices) are
-- offered and, for a command it always confirms, the reason is shown.
-- An edit waiting for approval (edits.review = "ask") carries its diff: the
-- chat question shows it diff-highlighted (the first DIFF_LINES lines), and
-- `permissions.keymaps.diff` (or :AgentPermission diff) opens all of it in
-- a split; with `ui = "select"` the split opens with the question.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("agent_lsp.permission")

M.choices = {
  { answer = "once", label = "Allow once" },
  { answer = "session", label = "Allow for this session" },
  { answer = "always", label = "Always allow" },
  { answer = "deny", label = "Deny" },
}

--- Wait for a UI answer from inside a server request (a coroutine), whether
--- the UI calls back at once or later: `begin(done)` starts the question and
--- calls done(answer) once.
---@return any|nil answer
function M.await(begin)
  local co, is_main = coroutine.running()
  local done, suspended, result = false, false, nil
  if not co or is_main then
    -- Not in a coroutine (older Neovim): wait for the answer in the event loop.
    begin(function(answer)
      done, result = true, answer
    end)
    vim.wait(10 * 60 * 1000, function()
      return done
    end, 20)
    return result
  end
  begin(function(answer)
    if done then
      return
    end
    done, result = true, answer
    if suspended then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not done then
    suspended = true
    coroutine.yield()
  end
  return result
end

--- vim.ui.select from inside a server request.
---@return any|nil choice
function M.select(items, opts)
  return M.await(function(done)
    vim.ui.select(items, opts, done)
  end)
end

--- The one-line question shown for a permission request.
function M.prompt(params)
  local parts = { params.title or ("Allow " .. tostring(params.tool or "the agent") .. "?") }
  if params.command and not (params.title or ""):find(params.command, 1, true) then
    parts[#parts + 1] = "$ " .. params.command
  end
  if params.path and not (params.title or ""):find(params.path, 1, true) then
    parts[#parts + 1] = params.path
  end
  local shown = table.concat(parts, " ")
  if params.detail and params.detail ~= "" and not shown:find(params.detail, 1, true) then
    parts[#parts + 1] = params.detail
  end
  if params.asksEveryTime then
    parts[#parts + 1] = params.asksEveryTime
  end
  return "agent_lsp: " .. table.concat(parts, " — "):gsub("\n", " ")
end

--- The answers to offer: those the server lists (every answer for an older
--- server), Deny always among them.
function M.offered(params)
  local allowed = {}
  for _, answer in ipairs(params.choices or { "once", "session", "always", "deny" }) do
    allowed[answer] = true
  end
  allowed.deny = true
  return vim.tbl_filter(function(c)
    return allowed[c.answer]
  end, M.choices)
end

-- The questions waiting for an answer, per client id, oldest first: the first
-- is drawn in that client's chat.
---@type table<integer, {params: table, offered: table[], done: fun(answer: string)}[]>
M.waiting = {}

local function config()
  return require("agent_lsp.config").options.permissions or {}
end

--- Whether a question waits for the user in `s`'s workspace (for `s` or for
--- no session, such as trusting a project's MCP server).
function M.is_waiting(s)
  for _, q in ipairs(s and M.waiting[s.client_id] or {}) do
    local sid = q.params.sessionId
    if sid == nil or sid == vim.NIL or sid == s.id then
      return true
    end
  end
  return false
end

M.DIFF_LINES = 30 -- diff lines shown in the chat question; the split shows all

--- The highlight group of a unified diff line.
function M.diff_highlight(line)
  if line:sub(1, 3) == "+++" or line:sub(1, 3) == "---" then
    return "DiffText"
  elseif line:sub(1, 1) == "+" then
    return "DiffAdd"
  elseif line:sub(1, 1) == "-" then
    return "DiffDelete"
  elseif line:sub(1, 2) == "@@" then
    return "DiffChange"
  end
  return "Normal"
end

local function diff_lines(params)
  return type(params.diff) == "string" and params.diff ~= "" and vim.split(params.diff, "\n", { trimempty = true }) or {}
end

--- The virtual lines of a question: what is asked, why it always asks, the diff
--- of an edit waiting for approval, and the keys.
function M.card_lines(params, offered)
  local keys = config().keymaps or {}
  local lines = { { { "▌ agent_lsp is waiting for you", "WarningMsg" } } }
  local prompt = M.prompt(params):gsub("^agent_lsp: ", "")
  for _, line in ipairs(vim.split(prompt, " — ", { plain = true })) do
    lines[#lines + 1] = { { "▌ " .. line, "Normal" } }
  end
  local diff = diff_lines(params)
  for i = 1, math.min(#diff, M.DIFF_LINES) do
    lines[#lines + 1] = { { "▌ ", "WarningMsg" }, { diff[i], M.diff_highlight(diff[i]) } }
  end
  if #diff > M.DIFF_LINES then
    lines[#lines + 1] = { { ("▌ … %d more lines"):format(#diff - M.DIFF_LINES), "Comment" } }
  end
  local answers = { { "▌", "WarningMsg" } }
  for _, choice in ipairs(offered) do
    local key = keys[choice.answer]
    answers[#answers + 1] = { " [" .. (key or ":AgentPermission " .. choice.answer) .. "]", "Special" }
    answers[#answers + 1] = { " " .. choice.label .. " ", "Normal" }
  end
  if #diff > 0 then
    answers[#answers + 1] = { " [" .. (keys.diff or ":AgentPermission diff") .. "]", "Special" }
    answers[#answers + 1] = { " Diff in a split ", "Normal" }
  end
  lines[#lines + 1] = answers
  return lines
end

--- The question's whole diff in a read-only split (filetype diff); its window id.
function M.open_diff(params)
  local diff = diff_lines(params)
  if #diff == 0 then
    return nil
  end
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, diff)
  vim.bo[buf].filetype = "diff"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  vim.b[buf].agent_lsp_permission_diff = true
  local win = api.nvim_open_win(buf, false, { split = "below", win = -1, height = math.min(#diff, 20) })
  return win
end

local function close_diff(q)
  if q.diff_win and api.nvim_win_is_valid(q.diff_win) then
    pcall(api.nvim_win_close, q.diff_win, true)
  end
  q.diff_win = nil
end

--- Open the diff of the client's oldest question in a split.
---@return boolean shown false when no question with a diff waits
function M.show_diff(client_id)
  local q = (M.waiting[client_id] or {})[1]
  if not q or #diff_lines(q.params) == 0 then
    return false
  end
  close_diff(q)
  q.diff_win = M.open_diff(q.params)
  return true
end

-- The floating cards: chat window -> float window, per client.
---@type table<integer, table<integer, integer>>
local floats = {}
local card_ns = api.nvim_create_namespace("agent_lsp.permission_card")
local is_card = {} -- float window -> true

local function only_cards(wins)
  for _, win in ipairs(wins) do
    if not is_card[win] then
      return false
    end
  end
  return true
end

local function close_floats(client_id)
  for _, float in pairs(floats[client_id] or {}) do
    if api.nvim_win_is_valid(float) then
      pcall(api.nvim_win_close, float, true)
    end
    is_card[float] = nil
  end
  floats[client_id] = nil
end

-- The card's lines as text, and its highlights as {row, start, end, group}.
local function card_text(card)
  local text, marks = {}, {}
  for row, chunks in ipairs(card) do
    local line = ""
    for _, chunk in ipairs(chunks) do
      marks[#marks + 1] = { row - 1, #line, #line + #chunk[1], chunk[2] }
      line = line .. chunk[1]
    end
    text[row] = line
  end
  return text, marks
end

--- Show the card in a float at the bottom of every window of the chat `buf`
--- (not focusable: the keys are the chat buffer's, the cursor stays put).
local function show_floats(client_id, buf, card)
  close_floats(client_id)
  local text, marks = card_text(card)
  floats[client_id] = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_config(win).relative == "" then
      local width = api.nvim_win_get_width(win)
      local height = 0
      for _, line in ipairs(text) do
        height = height + math.max(1, math.ceil(vim.fn.strdisplaywidth(line) / width))
      end
      height = math.min(height, vim.fn.getwininfo(win)[1].height)
      local fbuf = api.nvim_create_buf(false, true)
      api.nvim_buf_set_lines(fbuf, 0, -1, false, text)
      for _, m in ipairs(marks) do
        api.nvim_buf_set_extmark(fbuf, card_ns, m[1], m[2], { end_col = m[3], hl_group = m[4] })
      end
      vim.bo[fbuf].modifiable = false
      vim.bo[fbuf].bufhidden = "wipe"
      -- over the window's last rows (below its winbar, if any)
      local info = vim.fn.getwininfo(win)[1]
      local float = api.nvim_open_win(fbuf, false, {
        relative = "editor", row = info.winrow - 1 + (info.winbar or 0) + info.height - height, col = info.wincol - 1,
        width = width, height = height, focusable = false, style = "minimal", zindex = 45, noautocmd = true,
      })
      vim.wo[float].wrap = true
      vim.wo[float].winhighlight = "NormalFloat:Normal"
      floats[client_id][win] = float
      is_card[float] = true
    end
  end
end

--- The floating cards of a client's question: {chat window = float window}.
function M.floats(client_id)
  return floats[client_id] or {}
end

local function guard_ms()
  return tonumber(config().guard_ms) or 0
end

--- Whether the answer keys of the client's oldest question act yet: a key
--- pressed within `permissions.guard_ms` of its appearing does not answer.
function M.accepts_keys(client_id)
  local q = (M.waiting[client_id] or {})[1]
  return q ~= nil and q.shown_at ~= nil and vim.uv.now() - q.shown_at >= guard_ms()
end

local function chat_buffer(client_id)
  local c = require("agent_lsp.state").clients[client_id]
  return c, c and require("agent_lsp.chat").buffer(c)
end

local function clear(client_id, q)
  local c = require("agent_lsp.state").clients[client_id]
  local buf = c and c.chat_buf
  if buf and api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    for _, answer in ipairs(vim.list_extend(vim.tbl_map(function(c)
      return c.answer
    end, q.offered), { "diff" })) do
      local key = (config().keymaps or {})[answer]
      if key and key ~= "" then
        pcall(vim.keymap.del, "n", key, { buffer = buf })
      end
    end
  end
  close_floats(client_id)
  close_diff(q)
end

--- Draw the client's oldest question below the last line of its chat (again
--- after new lines: the question stays at the end).
function M.draw(client_id)
  local q = (M.waiting[client_id] or {})[1]
  if not q then
    return
  end
  local c, buf = chat_buffer(client_id)
  if not buf then
    return
  end
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local last = api.nvim_buf_line_count(buf) - 1
  local card = M.card_lines(q.params, q.offered)
  api.nvim_buf_set_extmark(buf, ns, last, 0, { virt_lines = card })
  q.shown_at = q.shown_at or vim.uv.now()
  for _, choice in ipairs(q.offered) do
    local key = (config().keymaps or {})[choice.answer]
    if key and key ~= "" then
      vim.keymap.set("n", key, function()
        if not M.accepts_keys(client_id) then
          -- typed before the question could be read: not an answer
          vim.notify("agent_lsp: the question just appeared; read it, then press the key again", vim.log.levels.WARN)
          return
        end
        M.answer(client_id, choice.answer)
      end, { buffer = buf, nowait = true, silent = true, desc = "agent_lsp: " .. choice.label })
    end
  end
  local diff_key = (config().keymaps or {}).diff
  if diff_key and diff_key ~= "" and #diff_lines(q.params) > 0 then
    vim.keymap.set("n", diff_key, function()
      M.show_diff(client_id)
    end, { buffer = buf, nowait = true, silent = true, desc = "agent_lsp: the edit's diff in a split" })
  end
  local chat = require("agent_lsp.chat")
  if require("agent_lsp.config").options.chat.auto_open and #vim.fn.win_findbuf(buf) == 0 then
    chat.open(c, false)
  end
  if #vim.fn.win_findbuf(buf) == 0 and not q.notified then
    -- No chat on screen: say it where the user looks, once per question.
    q.notified = true
    vim.notify(M.prompt(q.params) .. " — waiting for you: :AgentChat to see it, or :AgentPermission once|deny", vim.log.levels.WARN)
  end
  chat.follow(c)
  show_floats(client_id, buf, card)
end

--- Answer the client's oldest question (`answer` one of its offered answers; anything else denies).
---@return boolean answered false when no question waits
function M.answer(client_id, answer)
  local q = table.remove(M.waiting[client_id] or {}, 1)
  if not q then
    return false
  end
  clear(client_id, q)
  local allowed = vim.tbl_contains(vim.tbl_map(function(c)
    return c.answer
  end, q.offered), answer)
  q.done(allowed and answer or "deny")
  M.draw(client_id)
  vim.cmd("redrawstatus!")
  return true
end

--- agent/permission/answered: a question asked here too was answered in another
--- window of the agent host first; it goes away (the server ignores a later answer).
function M.settle(client_id, permission_id)
  local list = M.waiting[client_id] or {}
  for i, q in ipairs(list) do
    if q.params.permissionId == permission_id then
      table.remove(list, i)
      if i == 1 then
        clear(client_id, q)
      end
      q.done("deny")
      M.draw(client_id)
      vim.cmd("redrawstatus!")
      vim.notify("agent_lsp: the question was answered in another window", vim.log.levels.INFO)
      return true
    end
  end
  return false
end

--- :AgentPermission {once|session|always|deny}: answer the oldest waiting question
--- (of the current buffer's workspace, else of any); `diff`: show its diff in a split.
function M.command(opts)
  local answer = vim.trim(opts.args or "")
  if not vim.tbl_contains({ "once", "session", "always", "deny", "diff" }, answer) then
    return vim.notify("agent_lsp: :AgentPermission once|session|always|deny|diff", vim.log.levels.ERROR)
  end
  local id = vim.b.agent_lsp_client
  if not id then
    local attached = vim.lsp.get_clients({ name = require("agent_lsp.client").name, bufnr = 0 })
    id = attached[1] and attached[1].id
  end
  if not (id and M.waiting[id] and #M.waiting[id] > 0) then
    id = next(vim.tbl_filter(function(list)
      return #list > 0
    end, M.waiting))
  end
  if answer == "diff" then
    if not (id and M.show_diff(id)) then
      vim.notify("agent_lsp: no question with a diff is waiting", vim.log.levels.WARN)
    end
  elseif not (id and M.answer(id, answer)) then
    vim.notify("agent_lsp: no permission question is waiting", vim.log.levels.WARN)
  end
end

local function ask_in_chat(client_id, params, offered)
  return M.await(function(done)
    M.waiting[client_id] = M.waiting[client_id] or {}
    table.insert(M.waiting[client_id], { params = params, offered = offered, done = done })
    if #M.waiting[client_id] == 1 then
      M.draw(client_id)
    end
    require("agent_lsp.attention").alert("waiting", M.prompt(params) .. " — waiting for you")
    vim.cmd("redrawstatus!")
  end)
end

--- Handler of the server request agent/permission -> {answer}.
function M.handle_permission(_, params, ctx)
  params = params or {}
  local offered = M.offered(params)
  if config().ui ~= "select" and ctx and require("agent_lsp.state").clients[ctx.client_id] then
    return { answer = ask_in_chat(ctx.client_id, params, offered) or "deny" }
  end
  local preview = M.open_diff(params) -- a picker has no room for the edit's diff
  local choice = M.select(offered, {
    prompt = M.prompt(params),
    kind = "agent_lsp_permission",
    format_item = function(item)
      return item.label
    end,
  })
  close_diff({ diff_win = preview })
  return { answer = choice and choice.answer or "deny" }
end

--- A client went away: its questions can no longer be answered (its server
--- is gone with them), and are no longer drawn.
---@param c agent_lsp.ClientState
function M.client_gone(c)
  M.waiting[c.id] = nil
  vim.schedule(function()
    if c.chat_buf and api.nvim_buf_is_valid(c.chat_buf) then
      api.nvim_buf_clear_namespace(c.chat_buf, ns, 0, -1)
    end
  end)
end

-- A chat window opened, closed or resized while a question waits: its card follows.
api.nvim_create_autocmd({ "BufWinEnter", "WinResized", "WinClosed" }, {
  group = api.nvim_create_augroup("agent_lsp.permission_card", { clear = true }),
  callback = function(args)
    local wins = args.event == "WinClosed" and { tonumber(args.match) }
      or args.event == "WinResized" and (vim.v.event.windows or {})
      or { api.nvim_get_current_win() }
    if only_cards(wins) then
      return
    end
    for client_id, list in pairs(M.waiting) do
      if #list > 0 then
        vim.schedule(function()
          M.draw(client_id)
        end)
      end
    end
  end,
})

-- Keep the question below the transcript as it grows.
require("agent_lsp.state").subscribe(function(kind, s)
  if kind == "events" or kind == "reset" then
    if M.waiting[s.client_id] and #M.waiting[s.client_id] > 0 then
      vim.schedule(function()
        M.draw(s.client_id)
      end)
    end
  end
end)

--- window/showMessageRequest (the generic fallback): Neovim's own handler.
function M.handle_message_request(err, params, ctx)
  return vim.lsp.handlers[vim.lsp.protocol.Methods.window_showMessageRequest](err, params, ctx)
end

return M
