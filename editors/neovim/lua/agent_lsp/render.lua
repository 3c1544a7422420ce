-- Turns durable session events into the markdown transcript of a chat buffer.
--
-- Only appends (and rewrites a tool section in place), so streaming never
-- re-renders the buffer. Fold levels are kept in a per-buffer list that the
-- chat window's foldexpr reads: tool calls and reasoning are closed folds.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("agent_lsp.chat")

---@type table<integer, agent_lsp.Renderer>
local renderers = {}

---@class agent_lsp.Renderer
---@field buf integer
---@field levels string[]
---@field opts table
local Renderer = {}
Renderer.__index = Renderer

--- The renderer of a chat buffer (created on first use).
---@return agent_lsp.Renderer
function M.for_buffer(buf, opts)
  local r = renderers[buf]
  if not r then
    r = setmetatable({ buf = buf, opts = opts or {} }, Renderer)
    r:reset()
    renderers[buf] = r
    api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      once = true,
      callback = function()
        renderers[buf] = nil
      end,
    })
  end
  return r
end

function M.get(buf)
  return renderers[buf]
end

--- 'foldexpr' of chat windows.
function M.foldexpr()
  local r = renderers[api.nvim_get_current_buf()]
  if not r then
    return "0"
  end
  return r.levels[vim.v.lnum] or "0"
end

-- Text helpers ---------------------------------------------------------------

local function split_lines(text)
  return vim.split(text or "", "\n", { plain = true })
end

local function blocks_text(content)
  if type(content) == "string" then
    return content
  end
  local parts = {}
  for _, block in ipairs(content or {}) do
    if type(block) == "table" and block.type == "text" and block.text then
      parts[#parts + 1] = block.text
    end
  end
  return table.concat(parts, "")
end

local function one_line(s, max)
  s = tostring(s):gsub("%s+", " ")
  if #s > max then
    s = s:sub(1, max - 1) .. "…"
  end
  return s
end

-- The most telling argument of a tool call, shown in its header.
local function summarize_args(args)
  if type(args) == "string" then
    local ok, decoded = pcall(vim.json.decode, args)
    if ok and type(decoded) == "table" then
      args = decoded
    else
      return args ~= "" and one_line(args, 60) or ""
    end
  end
  if type(args) ~= "table" then
    return ""
  end
  for _, key in ipairs({ "command", "path", "pattern", "url", "query", "description" }) do
    if type(args[key]) == "string" then
      local s = one_line(args[key], 70)
      if key == "path" and type(args.newPath) == "string" then
        s = s .. " → " .. one_line(args.newPath, 40)
      end
      return s
    end
  end
  local ok, encoded = pcall(vim.json.encode, args)
  return ok and encoded ~= "{}" and encoded ~= "[]" and one_line(encoded, 60) or ""
end

local function reason_kind(reason)
  if type(reason) == "table" then
    return reason.kind or reason.type, reason
  end
  return reason, {}
end

-- Below a failed turn: how to send its message again (agent_lsp.retry).
M.RETRY_HINT = "_↻ :AgentRetry sends the message again_"

-- Buffer primitives -----------------------------------------------------------

function Renderer:reset()
  local buf = self.buf
  self.levels = { "0" }
  self.empty = true -- the buffer holds only its initial empty line
  self.block = nil -- "text" | "reasoning" while a stream block is open
  self.need_header = true
  self.last_kind = nil
  self.sections = {} -- callId -> {mark, body, header, diff}
  self.turn_marks = {} -- {turn, mark} of each user message, for the turn under the cursor
  self.pending = nil -- coalesced deltas {kind, text}
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    vim.bo[buf].modifiable = true
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
    vim.bo[buf].modifiable = false
  end
end

function Renderer:line_count()
  return api.nvim_buf_line_count(self.buf)
end

function Renderer:last_line()
  local n = self:line_count()
  return api.nvim_buf_get_lines(self.buf, n - 1, n, false)[1] or ""
end

-- Replace lines [s, e) (0-based) with `lines` whose fold levels are `levels`.
-- Levels first: the fold update may read them while the lines change.
function Renderer:set_lines(s, e, lines, levels)
  for _ = s + 1, e do
    table.remove(self.levels, s + 1)
  end
  for i = 1, #lines do
    local lv = type(levels) == "table" and (levels[i] or levels[#levels]) or levels or "0"
    table.insert(self.levels, s + i, lv)
  end
  api.nvim_buf_set_lines(self.buf, s, e, false, lines)
end

-- Fold state per section: Neovim gives a fold made after the user's `zo` the
-- open state, so a new section is closed explicitly, and a section rewritten
-- in place keeps, in each window, the state it had (closed unless the user opened it).
function Renderer:fold_states(row)
  local closed = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    closed[win] = api.nvim_win_call(win, function()
      return vim.fn.foldclosed(row + 1) ~= -1
    end)
  end
  return closed
end

--- Close the fold that starts at `row` (0-based) where `closed` (from fold_states) does not say it was open.
function Renderer:close_fold(row, closed)
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if not closed or closed[win] ~= false then
      api.nvim_win_call(win, function()
        if vim.wo.foldmethod == "expr" and vim.fn.foldclosed(row + 1) == -1 and vim.fn.foldlevel(row + 1) > 0 then
          vim.cmd(("silent! %dfoldclose"):format(row + 1))
        end
      end)
    end
  end
end

function Renderer:append(lines, levels)
  if self.empty then
    self.empty = false
    self:set_lines(0, 1, lines, levels)
  else
    local n = self:line_count()
    self:set_lines(n, n, lines, levels)
  end
end

-- Append streamed text at the very end; continuation lines get `prefix`.
function Renderer:stream(text, prefix, level)
  if text == "" then
    return
  end
  local parts = split_lines(text)
  for i = 2, #parts do
    parts[i] = prefix .. parts[i]
    self.levels[#self.levels + 1] = level
  end
  local row = self:line_count() - 1
  local col = #self:last_line()
  api.nvim_buf_set_text(self.buf, row, col, row, col, parts)
  self.empty = false
end

-- A blank separator line unless the transcript already ends with one.
function Renderer:gap()
  if not self.empty and self:last_line() ~= "" then
    self:append({ "" }, "0")
  end
end

-- Run `fn` with the buffer writable; chat windows whose cursor was on the last
-- line follow the new end. The window the user is in follows only in Normal
-- mode (a Visual selection or a pending command is never disturbed).
function Renderer:write(fn)
  local buf = self.buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local before = self:line_count()
  local followers = {}
  local current = api.nvim_get_current_win()
  local normal = api.nvim_get_mode().mode == "n"
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if (win ~= current or normal) and api.nvim_win_get_cursor(win)[1] >= before then
      followers[#followers + 1] = win
    end
  end
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = false
  -- The cursor goes to the end of the last line: a long streamed paragraph
  -- wraps, and the window must show its end, not its start.
  local after = self:line_count()
  local last_col = math.max(#self:last_line() - 1, 0)
  for _, win in ipairs(followers) do
    if api.nvim_win_is_valid(win) then
      local cur = api.nvim_win_get_cursor(win)
      if cur[1] ~= after or cur[2] ~= last_col then
        pcall(api.nvim_win_set_cursor, win, { after, last_col })
      end
    end
  end
  if not ok then
    error(err, 0)
  end
end

-- Events -------------------------------------------------------------------------

--- Render durable events (in seq order) at the end of the transcript.
function Renderer:render(events)
  self:write(function()
    for _, ev in ipairs(events) do
      self:event(ev)
    end
    self:flush()
  end)
end

function Renderer:flush()
  local p = self.pending
  if not p then
    return
  end
  self.pending = nil
  if p.kind == "text" then
    self:stream(p.text, "", "0")
  else
    self:stream(p.text, "  ", "1")
  end
end

function Renderer:close_block()
  self:flush()
  self.block = nil
end

function Renderer:agent_header()
  if self.need_header then
    self:gap()
    self:append({ "## Agent" }, "0")
    self.need_header = false
  end
end

function Renderer:open_text()
  self:close_block()
  self:agent_header()
  self:gap()
  self:append({ "" }, "0") -- the line the text streams into
  self.block = "text"
  self.last_kind = "text"
end

function Renderer:open_reasoning()
  self:close_block()
  self:agent_header()
  self:gap()
  self:append({ "▸ thinking", "  " }, { ">1", "1" })
  self:close_fold(self:line_count() - 2)
  self.block = "reasoning"
  self.last_kind = "reasoning"
end

function Renderer:delta(kind, text)
  if self.block ~= kind then
    if kind == "text" then
      self:open_text()
    else
      self:open_reasoning()
    end
  end
  if self.pending and self.pending.kind == kind then
    self.pending.text = self.pending.text .. text
  else
    self:flush()
    self.pending = { kind = kind, text = text }
  end
end

function Renderer:chunk(chunk)
  local t = chunk.type
  if t == "text-delta" then
    self:delta("text", chunk.text or "")
  elseif t == "reasoning-delta" then
    self:delta("reasoning", chunk.text or "")
  elseif t == "text-start" then
    self:open_text()
  elseif t == "reasoning-start" then
    self:open_reasoning()
  elseif t == "text-end" or t == "reasoning-end" then
    self:close_block()
  end
end

--- Whether a user message entered a running turn: sent as a steer, or a queued
--- message moved into the turn ("Steer now"), which keeps no delivery of its own
--- and is known by the step it entered at (as the VS Code panel tells them).
local function is_steer(msg, step)
  return msg.delivery == "steer" or (msg.delivery ~= "inject" and type(step) == "number" and step > 1)
end

function Renderer:user_message(msg, turn, step)
  -- A message meant for the model (after the user undid a change in review): its note, not its text.
  local note = type(msg.note) == "table" and type(msg.note.text) == "string" and msg.note or nil
  if note and note.kind ~= "skill" then
    self:note({ "_" .. note.text .. "_" })
    self.need_header = true
    return
  end
  self:close_block()
  local title = "## You"
  if msg.source and msg.source ~= "user" then
    title = "## You (" .. tostring(msg.source) .. ")"
  elseif is_steer(msg, step) then
    title = "## You (steering)"
  end
  local lines = { title, "" }
  local content = msg.content
  if type(content) == "table" and type(msg.context) == "table" then
    -- The context items travel as extra text blocks too; show them once, as references.
    content = vim.tbl_filter(function(block)
      return not (type(block.text) == "string" and block.text:sub(1, 10) == "<context>\n")
    end, content)
  end
  local images = require("agent_lsp.images")
  local pictures
  content, pictures = images.split(content)
  if note then -- a skill the user invoked: its name as a chip, not the instructions the model reads
    lines[#lines + 1] = "`" .. note.text .. "`"
  else
    vim.list_extend(lines, split_lines(vim.trim(blocks_text(content))))
  end
  for _, block in ipairs(pictures) do -- :AgentImage on the line opens it
    lines[#lines + 1] = images.line(block)
  end
  for _, item in ipairs(msg.context or {}) do
    lines[#lines + 1] = "> context: " .. M.describe_context(item)
  end
  self:gap()
  local row = self.empty and 0 or self:line_count()
  self:append(lines, "0")
  if type(turn) == "number" then
    local mark = api.nvim_buf_set_extmark(self.buf, ns, row, 0, {})
    self.turn_marks[#self.turn_marks + 1] = { turn = turn, mark = mark }
  end
  self.need_header = true
  self.last_kind = "user"
end

--- The turn whose messages are at or above `row` (0-based): the latest one
--- whose user message starts there or before; nil above the first.
function Renderer:turn_near(row)
  local best, best_row = nil, -1
  for _, t in ipairs(self.turn_marks) do
    local r = api.nvim_buf_get_extmark_by_id(self.buf, ns, t.mark, {})[1] or -1
    if r <= row and r >= best_row then
      best, best_row = t.turn, r
    end
  end
  return best
end

function M.describe_context(item)
  local where = item.uri and vim.fn.fnamemodify(vim.uri_to_fname(item.uri), ":~:.") or "?"
  if type(item.range) == "table" and item.range.start and item.range["end"] then
    local first, stop = item.range.start.line + 1, item.range["end"]
    -- An end at column 0 is the end of the line before it.
    local last = math.max(first, stop.line + ((stop.character or 0) > 0 and 1 or 0))
    where = first == last and ("%s:%d"):format(where, first) or ("%s:%d-%d"):format(where, first, last)
  end
  local s = ("%s %s"):format(item.kind or "file", where)
  if item.message then
    s = s .. " — " .. one_line(item.message, 80)
  end
  return s
end

-- "▸ ✓ read_file a.py · note": the status comes first, so a folded header
-- cut at the window's edge still shows it.
local RUNNING = "⋯"

local function section_header(section, status, note)
  local s = "▸ " .. status .. " " .. section.name
  if section.summary ~= "" then
    s = s .. " " .. section.summary
  end
  if note and note ~= "" then
    s = s .. " · " .. note
  end
  return s
end

function Renderer:section_row(section)
  local pos = api.nvim_buf_get_extmark_by_id(self.buf, ns, section.mark, {})
  return pos[1]
end

-- Rewrite a tool section (header + body) in place.
function Renderer:set_section(section, status, body, note)
  local row = self:section_row(section)
  if not row then
    return
  end
  local lines = { section_header(section, status, note) }
  local levels = { ">1" }
  for _, l in ipairs(body) do
    lines[#lines + 1] = l
    levels[#levels + 1] = "1"
  end
  local closed = self:fold_states(row)
  self:set_lines(row, row + 1 + section.body, lines, levels)
  self:close_fold(row, closed)
  section.body = #body
  section.status = status
  api.nvim_buf_set_extmark(self.buf, ns, row, 0, { id = section.mark })
end

function Renderer:tool_call(data)
  self:close_block()
  self:agent_header()
  if self.last_kind ~= "tool" then
    self:gap()
  end
  local section = {
    name = tostring(require("agent_lsp.mcp").tool_title(data.name or "tool")),
    summary = summarize_args(data.arguments),
    body = 0,
    status = RUNNING,
  }
  self:append({ section_header(section, section.status) }, ">1")
  self:close_fold(self:line_count() - 1)
  section.mark = api.nvim_buf_set_extmark(self.buf, ns, self:line_count() - 1, 0, {})
  self.sections[data.callId or ("#" .. section.mark)] = section
  self.last_kind = "tool"
  return section
end

local function fenced(lang, text, max)
  local lines = split_lines(text)
  while #lines > 0 and lines[#lines] == "" do
    lines[#lines] = nil
  end
  local out = { "  ```" .. lang }
  local shown = math.min(#lines, max)
  for i = 1, shown do
    out[#out + 1] = "  " .. lines[i]
  end
  out[#out + 1] = "  ```"
  if #lines > shown then
    out[#out + 1] = ("  … %d more lines"):format(#lines - shown)
  end
  return out
end

function Renderer:tool_result(data)
  self:close_block()
  local msg = data.message or {}
  local callId = data.callId or msg.callId
  local section = callId and self.sections[callId]
  if not section then
    section = self:tool_call({ callId = callId, name = msg.name or data.name, arguments = nil })
  end
  local meta = type(data.meta) == "table" and data.meta or {}
  local failed = (data.error ~= nil and data.error ~= vim.NIL) or msg.isError == true
  local status = failed and "✗" or "✓"
  local notes = {}
  if failed and type(data.error) == "table" and data.error.code == "PERMISSION_DENIED" then
    notes[#notes + 1] = "denied" -- the user's own answer, readable on the folded header
  end
  if type(meta.subagent) == "table" then
    section.child = meta.subagent.sessionId
    notes[#notes + 1] = require("agent_lsp.subagents").note(meta.subagent.status)
  end
  if type(meta.exitCode) == "number" then
    status = (meta.exitCode == 0 and not failed) and "✓" or "✗"
    notes[#notes + 1] = "exit " .. meta.exitCode
  end
  local max = self.opts.max_tool_lines or 40
  local body = {}
  local text = blocks_text(msg.content)
  if failed and type(data.error) == "table" and data.error.message and text == "" then
    text = (data.error.code and (data.error.code .. ": ") or "") .. data.error.message
  end
  local diff = type(meta.diff) == "string" and meta.diff ~= "" and meta.diff or nil
  if diff then
    -- The model's copy of the result usually repeats the diff: show it once, as a diff.
    local at = text:find(diff, 1, true)
    if at then
      text = vim.trim(text:sub(1, at - 1) .. text:sub(at + #diff))
    end
  end
  if diff and text ~= "" and not text:find("\n", 1, true) then
    -- What is left beside the diff is its one-line summary: plain text, not a code block.
    body[#body + 1] = "  " .. text
  elseif text ~= "" then
    vim.list_extend(body, fenced("", text, max))
  end
  if diff and require("agent_lsp.edits").left_unsaved(meta.path) then
    notes[#notes + 1] = "not saved: the buffer had your unsaved changes"
  end
  if diff then
    section.diff = diff
    section.path = meta.path
    vim.list_extend(body, fenced("diff", diff, max))
    notes[#notes + 1] = ":AgentDiff"
  end
  self:set_section(section, status, body, table.concat(notes, " · "))
  section.progress = nil
end

--- Live tool output (agent/tool/progress): the tail shows in the section until the result.
function Renderer:tool_progress(callId, data)
  local section = self.sections[callId]
  if not section or section.status ~= RUNNING then
    return
  end
  local text = type(data) == "table" and (data.text or data.output) or (type(data) == "string" and data)
  if type(text) ~= "string" or text == "" then
    return
  end
  -- Keep only the tail (bounded memory); the result replaces it anyway.
  local max = self.opts.max_tool_lines or 40
  local kept = split_lines((section.progress or "") .. text)
  if #kept > max + 1 then
    kept = vim.list_slice(kept, #kept - max)
  end
  section.progress = table.concat(kept, "\n")
  local lines = vim.list_slice(kept, 1, #kept)
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  if #lines > max then
    lines = vim.list_slice(lines, #lines - max + 1)
  end
  local body = {}
  local latest = ""
  for _, l in ipairs(lines) do
    body[#body + 1] = "  │ " .. l
    if vim.trim(l) ~= "" then
      latest = l
    end
  end
  -- The section is a closed fold: its header shows the latest output line.
  self:write(function()
    self:set_section(section, RUNNING, body, latest ~= "" and one_line(vim.trim(latest), 50) or nil)
  end)
end

--- A sub-agent's live status on its card (the section of its `subagent` call).
function Renderer:subagent_status(callId, data)
  local section = self.sections[callId]
  if not section then
    return
  end
  section.child = data.childSessionId
  if section.status == RUNNING then
    self:set_section(section, RUNNING, {}, require("agent_lsp.subagents").note(data.status))
  end
end

--- The section with `field` at or above `row` (0-based), else the latest one with it.
function Renderer:section_near(row, field)
  local best, best_row, last, last_row = nil, -1, nil, -1
  for _, section in pairs(self.sections) do
    if section[field] then
      local r = self:section_row(section) or -1
      if r <= row and r > best_row then
        best, best_row = section, r
      end
      if r > last_row then
        last, last_row = section, r
      end
    end
  end
  return best or last
end

--- The child session of the sub-agent card at or above `row` (0-based), else of the latest card.
function Renderer:subagent_near(row)
  local s = self:section_near(row, "child")
  return s and s.child
end

--- A user hook that ran: one folded line, its details inside (agent_lsp.hooks).
function Renderer:hook_run(data)
  self:close_block()
  if self.last_kind ~= "hook" then
    self:gap()
  end
  local header, body = require("agent_lsp.hooks").lines(data)
  local levels = { ">1" }
  for _ = 1, #body do
    levels[#levels + 1] = "1"
  end
  local row = self.empty and 0 or self:line_count()
  self:append({ header, unpack(body) }, levels)
  self:close_fold(row)
  self.last_kind = "hook"
end

function Renderer:note(lines)
  self:close_block()
  self:gap()
  self:append(lines, "0")
  self.last_kind = "note"
end

function Renderer:turn_end(reason)
  self:close_block()
  local kind, r = reason_kind(reason)
  if kind == "aborted" then
    self:note({ "_⏹ cancelled_" })
  elseif kind == "error" then
    local e = type(r.error) == "table" and r.error or r
    local lines = split_lines(("**Error** `%s`: %s"):format(e.code or "UNKNOWN", e.message or "the turn failed"))
    lines[#lines + 1] = M.RETRY_HINT
    self:note(lines)
  elseif kind == "max-tokens" then
    self:note({ "_⚠ stopped: the model reached its output limit_" })
  elseif kind == "blocked" then
    self:note({ "_⚠ the turn was blocked_" })
  elseif kind == "interrupted" then
    self:note({ "_⚠ interrupted: the server stopped during this turn_", M.RETRY_HINT })
  end
  self.need_header = true
end

--- The one line a logged revert shows (live and on resume alike):
--- "↺ reverted turn 2: a.py; skipped b.py (reason)". Paths relative to the cwd.
function M.revert_line(data)
  local function rel(path)
    return vim.fn.fnamemodify(tostring(path or "?"), ":~:.")
  end
  local reverted = vim.tbl_map(rel, type(data.reverted) == "table" and data.reverted or {})
  local line = ("↺ reverted turn %s: %s"):format(
    tostring(data.turn or "?"),
    #reverted > 0 and table.concat(reverted, ", ") or "nothing"
  )
  local skipped = {}
  for _, skip in ipairs(type(data.skipped) == "table" and data.skipped or {}) do
    if type(skip) == "table" then
      skipped[#skipped + 1] = ("%s (%s)"):format(rel(skip.path), skip.reason or "?")
    end
  end
  if #skipped > 0 then
    line = line .. "; skipped " .. table.concat(skipped, ", ")
  end
  return "_" .. line .. "_"
end

function Renderer:event(ev)
  local t, data = ev.type, ev.data or {}
  if t == "assistant/chunk" then
    if type(data.chunk) == "table" then
      self:chunk(data.chunk)
    end
    return
  end
  if t == "user/message" then
    -- A replacing user/message is compaction's summary checkpoint, not something the user said;
    -- a runtime-context one is the editor state the server told the model (the open files).
    local msg = data.message or {}
    if type(data.surfaceOp) ~= "table" and msg.source ~= "runtime-context" then
      self:user_message(msg, data.turn, data.step)
    end
  elseif t == "assistant/message" then
    self:close_block()
    if type(data.message) == "table" and data.message.interrupted then
      self:note({ "_(interrupted)_" })
    end
  elseif t == "tool/call" then
    self:tool_call(data)
  elseif t == "tool/result" then
    self:tool_result(data)
  elseif t == "turn/end" then
    self:turn_end(data.reason)
  elseif t == "hook/run" then
    self:hook_run(data)
  elseif t == "turn/revert" then
    self:note({ M.revert_line(data) })
  elseif t == "plan/update" then
    self:note(require("agent_lsp.plan").lines(data.items))
  elseif t == "session/mode" then
    self:note({ require("agent_lsp.plan").mode_line(data) })
  elseif t == "subagent/start" then
    local section = self.sections[data.callId]
    if section then
      section.child = data.childSessionId
    end
  elseif t == "session/model" then
    self:note({ require("agent_lsp.model").line(data) })
  elseif t == "session/rewind" then
    self:note({ ("_⟲ rewound to before turn %s: the agent no longer sees it or what followed_"):format(data.turn or "?") })
  elseif t == "llm/retry" then
    local f = type(data.failure) == "table" and data.failure or {}
    -- A wait too short to read ("in 0.0 s") is not shown.
    local wait = type(data.delayMs) == "number" and data.delayMs >= 100 and (" in %.1f s"):format(data.delayMs / 1000)
      or ""
    local line = ("_↻ %s: retrying%s (retry %s)_"):format(f.code or "model error", wait, data.retry or "?")
    local key = ("%s:%s"):format(tostring(data.turn), tostring(data.step))
    if self.last_kind == "retry" and self.retry_key == key then
      -- The retries of one step are one line, updated in place.
      local n = self:line_count()
      self:set_lines(n - 1, n, { line }, "0")
    else
      self:note({ line })
    end
    self.last_kind, self.retry_key = "retry", key
  elseif t == "compaction/end" then
    if type(data.error) == "table" then
      self:note({ "_⚠ compacting the context failed: " .. (data.error.message or "?") .. "_" })
    else
      self:note({ "_— earlier context compacted —_" })
    end
  end
end

--- The diff of the tool section at or above `row` (0-based), else the latest one.
---@return string|nil diff, string|nil path
function Renderer:diff_near(row)
  local s = self:section_near(row, "diff")
  if s then
    return s.diff, s.path
  end
end

M.Renderer = Renderer
M.namespace = ns
return M
