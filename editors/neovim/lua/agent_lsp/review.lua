-- Reviewing the agent's edits (the server setting edits.review = "review"):
-- each pending hunk is a sign in its buffer (an extmark, so it moves with
-- the text), `]h` / `[h` move between them, `<leader>ak` / `<leader>au`
-- keep / undo the one under the cursor, :AgentReview lists them in the
-- quickfix list (and keeps or undoes all of them with an argument).
--
-- The hunks come from agent/review/list, asked again whenever a review/*
-- event arrives, after a keep/undo, and when an agent server attaches a
-- buffer or goes away. A server started again (after a crash, or by
-- :AgentReview) reads the hunks still pending back from its session logs; it
-- finds them in the buffers' unsaved text, so the modified buffers of its
-- folder are attached to it as it starts.
local M = {}

local config = require("agent_lsp.config")
local methods = require("agent_lsp.protocol").METHODS
local ns = vim.api.nvim_create_namespace("agent_lsp_review")

---@type table<integer, table[]> buffer -> its pending hunks {hunk, mark}
M.by_buf = {}

local function opts()
  return config.options.review or {}
end

local function map_keys(buf)
  if vim.b[buf].agent_lsp_review_keys then
    return
  end
  vim.b[buf].agent_lsp_review_keys = true
  local keys = opts().keymaps or {}
  local function set(lhs, fn, desc)
    if lhs then
      vim.keymap.set("n", lhs, fn, { buffer = buf, desc = "agent_lsp: " .. desc })
    end
  end
  set(keys.next, function()
    M.jump(1)
  end, "next agent change")
  set(keys.prev, function()
    M.jump(-1)
  end, "previous agent change")
  set(keys.keep, function()
    M.resolve_at_cursor("keep")
  end, "keep the agent change under the cursor")
  set(keys.undo, function()
    M.resolve_at_cursor("undo")
  end, "undo the agent change under the cursor")
end

local function place(hunks)
  for buf in pairs(M.by_buf) do
    if vim.api.nvim_buf_is_valid(buf) then
      vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    end
  end
  M.by_buf = {}
  local sign = opts().sign or "▎"
  for _, hunk in ipairs(hunks or {}) do
    local buf = vim.fn.bufnr(vim.uri_to_fname(hunk.uri))
    if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
      local count = vim.api.nvim_buf_line_count(buf)
      local first = math.min(hunk.range.start.line, count - 1)
      local last = math.max(first, math.min(hunk.range["end"].line - 1, count - 1))
      local deleted = hunk.range["end"].line == hunk.range.start.line
      local mark = vim.api.nvim_buf_set_extmark(buf, ns, first, 0, {
        end_row = last,
        sign_text = deleted and "▁" or sign,
        sign_hl_group = deleted and "DiffDelete" or "DiffAdd",
        number_hl_group = deleted and nil or "DiffAdd",
        invalidate = true,
      })
      M.by_buf[buf] = M.by_buf[buf] or {}
      table.insert(M.by_buf[buf], { hunk = hunk, mark = mark })
      map_keys(buf)
    end
  end
end

local function agent_clients()
  return vim.lsp.get_clients({ name = require("agent_lsp.client").name })
end

local generation = 0

--- Ask every agent server for its pending hunks and draw them; then cb().
--- Only the newest refresh draws: refreshes overlap (an attach, a review
--- event, a resolve's answer), and an older answer can arrive after a newer
--- one while a resolve is under way on the server.
function M.refresh(cb)
  local clients = agent_clients()
  local all, waiting = {}, #clients
  generation = generation + 1
  local mine = generation
  local function done()
    if mine == generation then
      place(all)
      M.hunks = all
    end
    if cb then
      cb()
    end
  end
  if waiting == 0 then
    return done()
  end
  for _, client in ipairs(clients) do
    require("agent_lsp.client").request(client, methods["agent/review/list"], vim.empty_dict(), function(err, result)
      for _, hunk in ipairs(not err and result and result.hunks or {}) do
        hunk.client_id = client.id
        all[#all + 1] = hunk
      end
      waiting = waiting - 1
      if waiting == 0 then
        done()
      end
    end)
  end
end

--- Where each of the buffer's hunks is now: {hunk, first, last} (0-based rows), by position.
function M.positions(buf)
  local out = {}
  for _, item in ipairs(M.by_buf[buf] or {}) do
    local mark = vim.api.nvim_buf_get_extmark_by_id(buf, ns, item.mark, { details = true })
    if mark[1] and not (mark[3] and mark[3].invalid) then
      out[#out + 1] = { hunk = item.hunk, first = mark[1], last = mark[3] and mark[3].end_row or mark[1] }
    end
  end
  table.sort(out, function(a, b)
    return a.first < b.first
  end)
  return out
end

--- Move the cursor to the next (dir 1) or previous (dir -1) pending hunk.
function M.jump(dir)
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local list = M.positions(buf)
  if dir < 0 then
    for i = #list, 1, -1 do
      if list[i].first < row then
        return vim.api.nvim_win_set_cursor(0, { list[i].first + 1, 0 })
      end
    end
  else
    for _, p in ipairs(list) do
      if p.first > row then
        return vim.api.nvim_win_set_cursor(0, { p.first + 1, 0 })
      end
    end
  end
  vim.notify("agent_lsp: no agent change " .. (dir < 0 and "above" or "below"), vim.log.levels.INFO)
end

local function resolve(client_id, params, done)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client then
    return vim.notify("agent_lsp: the agent server is not running", vim.log.levels.WARN)
  end
  require("agent_lsp.client").request(client, methods["agent/review/resolve"], params, function(err, result)
    if err then
      vim.notify("agent_lsp: " .. (err.message or tostring(err)), vim.log.levels.ERROR)
    elseif result and result.skipped and #result.skipped > 0 then
      vim.notify("agent_lsp: not undone: " .. result.skipped[1].reason, vim.log.levels.WARN)
    end
    M.refresh(done)
  end)
end

--- Keep or undo the hunk under the cursor.
function M.resolve_at_cursor(action)
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, p in ipairs(M.positions(buf)) do
    if p.first <= row and row <= p.last then
      return resolve(p.hunk.client_id, { sessionId = p.hunk.sessionId, hunkId = p.hunk.hunkId, action = action })
    end
  end
  vim.notify("agent_lsp: no agent change under the cursor", vim.log.levels.INFO)
end

--- :AgentReview — the pending hunks in the quickfix list; `keep` / `undo`
--- resolve all of them (every session's). Starts the server if none runs.
function M.command(cmd_opts)
  local arg = vim.trim(cmd_opts and cmd_opts.args or "")
  if arg ~= "" and arg ~= "keep" and arg ~= "undo" then
    return vim.notify("agent_lsp: :AgentReview takes keep, undo or nothing (list)", vim.log.levels.ERROR)
  end
  if #agent_clients() == 0 then
    require("agent_lsp.client").for_buffer(0)
  end
  M.refresh(function()
    local hunks = M.hunks or {}
    if arg == "" then
      local items = {}
      for _, h in ipairs(hunks) do
        local added = select(2, h.newText:gsub("\n", ""))
        local removed = select(2, h.oldText:gsub("\n", ""))
        items[#items + 1] = {
          filename = vim.uri_to_fname(h.uri),
          lnum = h.range.start.line + 1,
          text = ("agent change %s (turn %d): +%d -%d"):format(h.hunkId, h.turn, added, removed),
        }
      end
      vim.fn.setqflist({}, " ", { title = "agent changes to review", items = items })
      if #items == 0 then
        return vim.notify("agent_lsp: no agent change waits for review")
      end
      return vim.cmd("copen")
    end
    local sessions = {}
    for _, h in ipairs(hunks) do
      if not sessions[h.sessionId] then
        sessions[h.sessionId] = true
        resolve(h.client_id, { sessionId = h.sessionId, all = true, action = arg })
      end
    end
  end)
end

local refresh_queued = false

--- One refresh for a burst of attaches (a server starting attaches every buffer).
local function queue_refresh()
  if refresh_queued then
    return
  end
  refresh_queued = true
  vim.schedule(function()
    refresh_queued = false
    M.refresh()
  end)
end

---@type table<integer, true> agent clients whose folder's modified buffers were attached
local adopted = {}

--- The modified buffers of the client's folder that it does not have yet: the
--- unsaved text a review waits on, so the server can find its hunks there.
local function attach_modified(client)
  if adopted[client.id] then
    return
  end
  adopted[client.id] = true
  local root = client.config.root_dir
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified and vim.api.nvim_buf_get_name(buf) or ""
    if name ~= "" and root and vim.startswith(name, root .. "/") and not vim.lsp.buf_is_attached(buf, client.id) then
      require("agent_lsp").attach(buf)
    end
  end
end

vim.api.nvim_create_autocmd({ "LspAttach", "LspDetach" }, {
  group = vim.api.nvim_create_augroup("agent_lsp_review", { clear = true }),
  callback = function(ev)
    local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
    if not client or client.name ~= require("agent_lsp.client").name then
      return
    end
    if ev.event == "LspAttach" then
      attach_modified(client)
    else
      adopted[client.id] = nil
    end
    queue_refresh()
  end,
})

require("agent_lsp.state").subscribe(function(kind, _, events)
  if kind ~= "events" then
    return
  end
  for _, ev in ipairs(events or {}) do
    if type(ev.type) == "string" and ev.type:sub(1, 7) == "review/" then
      return vim.schedule(function()
        M.refresh()
      end)
    end
  end
end)

return M
