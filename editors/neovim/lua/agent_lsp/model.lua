-- The session's model from Neovim.
--
--   :AgentModel                 choose from the models the server offers (the
--                               configured ones and what the endpoint lists)
--   :AgentModel {model} [effort]  switch to {model} (effort: minimal, low,
--                               medium or high) from the session's next step on
--
-- The switch is a session/model event in the log; the chat shows it.
local M = {}

local state = require("agent_lsp.state")
local client_mod = require("agent_lsp.client")
local methods = require("agent_lsp.protocol").METHODS

M.EFFORTS = { "minimal", "low", "medium", "high" }

local function notify(msg, level)
  vim.notify("agent_lsp: " .. msg, level or vim.log.levels.INFO)
end

--- The models the server offers ({provider, model, source, contextWindow?}), and its note.
local function offered(client, timeout_ms)
  local err, result = client_mod.request_sync(client, methods["agent/model/list"], { workspaceUri = client_mod.workspace_uri(client) },
    timeout_ms)
  if err or type(result) ~= "table" then
    return {}, err and (err.message or vim.inspect(err)) or nil
  end
  return result.models or {}, result.note
end

--- The one line a session/model event shows in the chat.
function M.line(data)
  local effort = data.effort and (" (effort %s)"):format(data.effort) or ""
  return ("_⇄ model: %s %s%s, was %s_"):format(data.provider or "?", data.model or "?", effort, data.previousModel or "?")
end

local function switch(client, s, provider, model, effort)
  local params = { sessionId = s.id, model = model, provider = provider, effort = effort }
  client_mod.request(client, methods["agent/session/setModel"], params, function(err, result)
    if err then
      local text = type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
      return notify("model switch failed: " .. text, vim.log.levels.ERROR)
    end
    notify(("model: %s %s%s from the next step"):format(result.provider, result.model,
      result.effort and (" (effort " .. result.effort .. ")") or ""))
  end)
end

--- :AgentModel [model] [effort]
function M.command(opts)
  local client, c = require("agent_lsp.commands").context()
  local s = c and c.current and state.sessions[c.current] or nil
  if not client or not s then
    return notify("no agent session yet: ask something with :AgentAsk", vim.log.levels.WARN)
  end
  local args = opts and opts.fargs or {}
  local models, note = offered(client, 10000)
  if args[1] then
    local effort = args[2]
    if effort and not vim.tbl_contains(M.EFFORTS, effort) then
      return notify(("effort must be one of %s"):format(table.concat(M.EFFORTS, ", ")), vim.log.levels.WARN)
    end
    local known = vim.iter(models):find(function(m)
      return m.model == args[1]
    end)
    return switch(client, s, known and known.provider or nil, args[1], effort)
  end
  if #models == 0 then
    return notify("no models to choose from" .. (note and (": " .. note) or ""), vim.log.levels.WARN)
  end
  if note then
    notify(note, vim.log.levels.WARN)
  end
  local format = function(m)
    local window = m.contextWindow and ("  %dk tokens"):format(math.floor(m.contextWindow / 1000)) or ""
    return ("%s %s%s  (%s)"):format(m.provider, m.model, window, m.source)
  end
  vim.ui.select(models, { prompt = "agent_lsp: model", kind = "agent_lsp_model", format_item = format }, function(m)
    if m then
      switch(client, s, m.provider, m.model, nil)
    end
  end)
end

--- Completion of :AgentModel: model names, then efforts.
function M.complete(arglead, cmdline)
  local words = vim.split(cmdline, "%s+", { trimempty = true })
  local index = #words - (arglead == "" and 0 or 1) -- how many arguments come before this one
  local choices = {}
  if index <= 1 then
    local client = require("agent_lsp.commands").context()
    for _, m in ipairs(client and offered(client, 3000) or {}) do
      choices[#choices + 1] = m.model
    end
  elseif index == 2 then
    choices = M.EFFORTS
  end
  return vim.tbl_filter(function(name)
    return vim.startswith(name, arglead)
  end, choices)
end

return M
