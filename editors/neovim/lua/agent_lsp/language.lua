-- agent/languageQuery: the agent asks the language servers this Neovim runs for
-- a buffer (every attached client but agent_lsp itself) and gets LSP's own
-- shapes back (docs/protocol.md#language-queries). Diagnostics are answered for
-- the buffer version the agent names: the answer waits (bounded) until each
-- server that reports diagnostics has reported on that version.
local M = {}

local api = vim.api
local lsp_methods = vim.lsp.protocol.Methods
local await = require("agent_lsp.permissions").await

local AGENT = "agent_lsp"
local POLL_MS = 20

M.reports = {} ---@type table<integer, table<integer, {version: integer|nil, at: integer}>> bufnr -> client id -> last report
M.reporters = {} ---@type table<integer, boolean> clients that have reported diagnostics at all
local ticks = 0

local function has_011()
  return vim.fn.has("nvim-0.11") == 1
end

local function method_of(obj, name, ...)
  if has_011() then
    return obj[name](obj, ...)
  end
  return obj[name](...)
end

local function noted(client_id, uri, version)
  local bufnr = vim.uri_to_bufnr(uri)
  ticks = ticks + 1
  M.reports[bufnr] = M.reports[bufnr] or {}
  M.reports[bufnr][client_id] = { version = version, at = ticks }
  M.reporters[client_id] = true
end

--- Note every diagnostics report with its version (push and pull), then hand it on.
function M.install()
  if M.installed then
    return
  end
  M.installed = true
  local push = vim.lsp.handlers[lsp_methods.textDocument_publishDiagnostics]
  vim.lsp.handlers[lsp_methods.textDocument_publishDiagnostics] = function(err, result, ctx, config)
    if result and result.uri then
      noted(ctx.client_id, result.uri, result.version)
    end
    return push(err, result, ctx, config)
  end
  local pull = vim.lsp.handlers[lsp_methods.textDocument_diagnostic]
  if pull then
    vim.lsp.handlers[lsp_methods.textDocument_diagnostic] = function(err, result, ctx, config)
      local document = ctx.params and ctx.params.textDocument
      if result and document then
        noted(ctx.client_id, document.uri, ctx.version)
      end
      return pull(err, result, ctx, config)
    end
  end
end

local function is_agent(client)
  return client.name == AGENT
end

--- The language servers of a buffer (or of every buffer), agent_lsp left out.
local function servers(bufnr, method)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients(bufnr and { bufnr = bufnr } or {})) do
    if not is_agent(client) and (not method or method_of(client, "supports_method", method, bufnr)) then
      out[#out + 1] = client
    end
  end
  return out
end

-- Positions: agent_lsp and each language server may have negotiated other
-- encodings (utf-8, utf-16, utf-32); a position is converted through the
-- byte offset in its line.

--- A document's lines: its buffer's if loaded, else the file's.
local function lines_reader()
  local cache = {}
  return function(uri)
    if cache[uri] == nil then
      local bufnr = vim.uri_to_bufnr(uri)
      if api.nvim_buf_is_loaded(bufnr) then
        cache[uri] = api.nvim_buf_get_lines(bufnr, 0, -1, false)
      else
        local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri))
        cache[uri] = ok and lines or {}
      end
    end
    return cache[uri]
  end
end

local function to_byte(line, encoding, index)
  if encoding == "utf-8" then
    return math.min(index, #line)
  end
  local ok, byte
  if has_011() then
    ok, byte = pcall(vim.str_byteindex, line, encoding, index, false)
  else
    ok, byte = pcall(vim.str_byteindex, line, index, encoding == "utf-16")
  end
  return ok and byte or #line
end

local function from_byte(line, encoding, byte)
  byte = math.min(byte, #line)
  if encoding == "utf-8" then
    return byte
  end
  local ok, a, b
  if has_011() then
    ok, a = pcall(vim.str_utfindex, line, encoding, byte, false)
  else
    ok, a, b = pcall(vim.str_utfindex, line, byte)
    a = encoding == "utf-16" and b or a
  end
  return ok and a or byte
end

--- A position converted from one encoding to another, in the line it is in.
local function convert(position, lines, from, to)
  if from == to or type(position) ~= "table" then
    return position
  end
  local line = lines[position.line + 1] or ""
  return { line = position.line, character = from_byte(line, to, to_byte(line, from, position.character)) }
end

local function convert_range(range, lines, from, to)
  if from == to or type(range) ~= "table" then
    return range
  end
  return { start = convert(range.start, lines, from, to), ["end"] = convert(range["end"], lines, from, to) }
end

--- A language server's result, its positions converted to agent_lsp's encoding.
local function converted(kind, result, uri, read, from, to)
  if from == to then
    return result
  end
  local function location(item)
    if item.targetUri then
      local lines = read(item.targetUri)
      item.targetRange = convert_range(item.targetRange, lines, from, to)
      item.targetSelectionRange = convert_range(item.targetSelectionRange, lines, from, to)
      item.originSelectionRange = nil
    elseif item.uri then
      item.range = convert_range(item.range, read(item.uri), from, to)
    end
    return item
  end
  local function edit(workspace_edit)
    for change_uri, edits in pairs(workspace_edit.changes or {}) do
      for _, e in ipairs(edits) do
        e.range = convert_range(e.range, read(change_uri), from, to)
      end
    end
    for _, change in ipairs(workspace_edit.documentChanges or {}) do
      for _, e in ipairs(change.edits or {}) do
        e.range = convert_range(e.range, read(change.textDocument.uri), from, to)
      end
    end
    return workspace_edit
  end
  local function symbol(item)
    if item.location then
      item.location = location(item.location)
    else
      local lines = read(uri)
      item.range = convert_range(item.range, lines, from, to)
      item.selectionRange = convert_range(item.selectionRange, lines, from, to)
      for _, child in ipairs(item.children or {}) do
        symbol(child)
      end
    end
    return item
  end
  if kind == "definition" or kind == "references" then
    return vim.tbl_map(location, result)
  elseif kind == "rename" then
    return edit(result)
  elseif kind == "codeActions" then
    return vim.tbl_map(function(action)
      action.edit = action.edit and edit(action.edit)
      return action
    end, result)
  elseif kind == "documentSymbols" or kind == "workspaceSymbols" then
    return vim.tbl_map(symbol, result)
  end
  return result
end

local function names(clients)
  return vim.tbl_map(function(c)
    return c.name
  end, clients)
end

local function wait_until(ready, timeout_ms)
  if ready() then
    return true
  end
  return await(function(done)
    local timer = assert(vim.uv.new_timer())
    local started = vim.uv.now()
    timer:start(POLL_MS, POLL_MS, vim.schedule_wrap(function()
      if timer:is_closing() then
        return
      end
      local ok = ready()
      if ok or vim.uv.now() - started > timeout_ms then
        timer:stop()
        timer:close()
        done(ok)
      end
    end))
  end)
end

--- The buffer of a document, loaded (so its language servers attach) if it was not.
local function buffer_of(uri, timeout_ms)
  local bufnr = vim.uri_to_bufnr(uri)
  if not api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
    if vim.bo[bufnr].filetype == "" then
      api.nvim_buf_call(bufnr, function()
        vim.cmd("filetype detect")
      end)
    end
    wait_until(function()
      return #vim.lsp.get_clients({ bufnr = bufnr }) > 0
    end, math.min(timeout_ms, 3000))
  end
  return bufnr
end

--- The clients of the buffer that report diagnostics: those that ever did
--- (a server that only completes, such as an AI completion server, never does).
local function reporters(clients)
  return vim.tbl_filter(function(c)
    return M.reporters[c.id] == true
  end, clients)
end

--- Whether every diagnostics reporter of the buffer has reported on `version`
--- (while none has reported yet, say a server just starting, not yet).
local function reported(bufnr, clients, version, since)
  local seen = M.reports[bufnr] or {}
  local expected = reporters(clients)
  if #expected == 0 then
    return false
  end
  for _, client in ipairs(expected) do
    local last = seen[client.id]
    if not last then
      return false
    end
    if last.version ~= nil and version ~= nil then
      if last.version < version then
        return false
      end
    elseif last.at <= since then
      return false
    end
  end
  return true
end

--- The diagnostics these clients reported, per buffer, as LSP Diagnostics in `encoding`.
local function diagnostics_of(bufnr, clients, encoding)
  local out = {}
  for _, client in ipairs(clients) do
    for _, pull in ipairs({ false, true }) do
      local ns = vim.lsp.diagnostic.get_namespace(client.id, pull)
      for _, d in ipairs(vim.diagnostic.get(bufnr, { namespace = ns })) do
        local lines = api.nvim_buf_get_lines(d.bufnr, 0, -1, false)
        local original = d.user_data and d.user_data.lsp or {}
        local function position(row, col)
          return { line = row, character = from_byte(lines[row + 1] or "", encoding, col or 0) }
        end
        out[d.bufnr] = out[d.bufnr] or {}
        table.insert(out[d.bufnr], {
          range = { start = position(d.lnum, d.col), ["end"] = position(d.end_lnum or d.lnum, d.end_col or d.col) },
          severity = d.severity,
          message = d.message,
          source = d.source or original.source,
          code = original.code or d.code,
        })
      end
    end
  end
  return out
end

local function files(by_buffer)
  local out = {}
  for bufnr, diagnostics in pairs(by_buffer) do
    out[#out + 1] = { uri = vim.uri_from_bufnr(bufnr), diagnostics = diagnostics }
  end
  return out
end

local function diagnostics(params, encoding)
  local timeout = params.timeoutMs or 1500
  local document = params.textDocument
  local answer = { servers = {}, files = {} }
  local everyone = servers(nil)
  if document then
    local since = ticks
    local bufnr = buffer_of(document.uri, timeout)
    local attached = servers(bufnr)
    if #attached == 0 then
      return answer -- no language server for this buffer: the agent asks its own
    end
    local version = document.version
    answer.pending = not wait_until(function()
      return reported(bufnr, attached, version, since)
    end, timeout)
    local own = reporters(attached)
    if #own == 0 then
      return { servers = {}, files = {} } -- none of them reports diagnostics: the agent asks its own
    end
    answer.servers = names(own)
    if not params.everywhere then
      answer.files = files(diagnostics_of(bufnr, own, encoding))
      return answer
    end
  elseif #everyone == 0 then
    return answer
  end
  answer.servers = #answer.servers > 0 and answer.servers or names(everyone)
  answer.files = files(diagnostics_of(nil, everyone, encoding))
  return answer
end

local REQUESTS = {
  definition = lsp_methods.textDocument_definition,
  references = lsp_methods.textDocument_references,
  hover = lsp_methods.textDocument_hover,
  documentSymbols = lsp_methods.textDocument_documentSymbol,
  workspaceSymbols = lsp_methods.workspace_symbol,
  rename = lsp_methods.textDocument_rename,
  codeActions = lsp_methods.textDocument_codeAction,
}

local function request(client, method, params, bufnr, timeout_ms)
  return await(function(done)
    local ok = method_of(client, "request", method, params, function(err, result)
      done({ err = err, result = result })
    end, bufnr)
    if not ok then
      done({ err = "not sent" })
    end
    vim.defer_fn(function()
      done({ err = "timeout" })
    end, timeout_ms)
  end)
end

local function hover_text(result)
  local contents = result and result.contents
  if type(contents) == "string" then
    return contents
  end
  if type(contents) == "table" then
    if contents.value then
      return contents.value
    end
    local parts = {}
    for _, part in ipairs(contents) do
      parts[#parts + 1] = type(part) == "string" and part or part.value
    end
    return table.concat(parts, "\n")
  end
end

local function ask(params, encoding)
  local method = REQUESTS[params.kind]
  local timeout = math.max(params.timeoutMs or 1500, 5000)
  local bufnr = params.textDocument and buffer_of(params.textDocument.uri, timeout) or nil
  local clients = servers(bufnr, method)
  local read = lines_reader()
  local uri = params.textDocument and params.textDocument.uri
  for _, client in ipairs(clients) do
    local theirs = client.offset_encoding
    local lsp_params = { textDocument = uri and { uri = uri } or nil }
    if params.kind == "workspaceSymbols" then
      lsp_params = { query = params.query or "" }
    elseif params.kind == "codeActions" then
      lsp_params.range = convert_range(params.range, read(uri), encoding, theirs)
      local here = diagnostics_of(bufnr, { client }, theirs)[bufnr] or {}
      lsp_params.context = { diagnostics = here }
    else
      lsp_params.position = convert(params.position, read(uri), encoding, theirs)
      if params.kind == "references" then
        lsp_params.context = { includeDeclaration = true }
      elseif params.kind == "rename" then
        lsp_params.newName = params.newName
      end
    end
    local reply = request(client, method, lsp_params, bufnr, timeout)
    if not reply.err and reply.result ~= nil and reply.result ~= vim.NIL then
      local answer = { servers = { client.name } }
      local result = reply.result
      if params.kind == "definition" or params.kind == "references" then
        result = vim.islist(result) and result or { result }
      end
      result = converted(params.kind, result, uri, read, theirs, encoding)
      if params.kind == "hover" then
        answer.hover = hover_text(result)
      elseif params.kind == "rename" then
        answer.edit = result
      elseif params.kind == "codeActions" then
        answer.actions = vim.tbl_filter(function(a)
          return type(a.command) ~= "string" and a.edit ~= nil
        end, result)
      elseif params.kind == "documentSymbols" or params.kind == "workspaceSymbols" then
        answer.symbols = result
      else
        answer.locations = result
      end
      return answer
    end
  end
  return { servers = {} }
end

--- :checkhealth: which language servers answer the agent's questions.
function M.check(health)
  local attached = servers(nil)
  local reporting = reporters(attached)
  if #attached == 0 then
    health.info("language queries: no other language server runs; the agent asks the servers agent_lsp runs "
      .. "itself (`agent-lsp config show` lists them)")
  elseif #reporting == 0 then
    health.info(("language queries: answered by %s; none has reported diagnostics yet, so the agent's own "
      .. "servers check its edits"):format(table.concat(names(attached), ", ")))
  else
    health.ok(("language queries: answered by %s (diagnostics: %s), each for the buffers it is attached to"):format(
      table.concat(names(attached), ", "), table.concat(names(reporting), ", ")))
  end
end

--- Handler of the server request agent/languageQuery -> LanguageQueryResult.
function M.handle(_, params, ctx)
  params = params or {}
  local agent = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = agent and agent.offset_encoding or "utf-16"
  if params.kind == "diagnostics" then
    return diagnostics(params, encoding)
  end
  if not REQUESTS[params.kind] then
    return nil, { code = -32602, message = "unknown language query kind: " .. tostring(params.kind) }
  end
  return ask(params, encoding)
end

return M
