-- :AgentMcpPrompt server:name [arg=value ...] — run an MCP server's prompt:
-- its messages become your next message to the agent (agent/mcp/prompt/run),
-- in the shown session or a new one. Words without `=` are joined into the
-- first argument not given otherwise. Completion offers server:name from
-- agent/mcp/prompts, then the prompt's `argument=`.
local client_mod = require("agent_lsp.client")
local methods = require("agent_lsp.protocol").METHODS

local M = {}

local cache = {} -- client id -> the last agent/mcp/prompts answer

local function prompts(client, timeout_ms)
  local err, result = client_mod.request_sync(client, methods["agent/mcp/prompts"], { workspaceUri = client_mod.workspace_uri(client) }, timeout_ms)
  if not err and result then
    cache[client.id] = result.prompts or {}
  end
  return cache[client.id] or {}, err
end

local function find(list, ref)
  for _, p in ipairs(list) do
    if p.server .. ":" .. p.name == ref then
      return p
    end
  end
end

--- Completion of :AgentMcpPrompt (the first listing may wait for the servers to start).
function M.complete(arglead, cmdline)
  local client = require("agent_lsp.commands").context()
  if not client then
    return {}
  end
  local list = cache[client.id] or prompts(client, 15000)
  local words = vim.split(vim.trim(cmdline), "%s+")
  local typing_first = #words <= 1 or (#words == 2 and arglead ~= "")
  local out = {}
  if typing_first then
    for _, p in ipairs(list) do
      local ref = p.server .. ":" .. p.name
      if vim.startswith(ref, arglead) then
        out[#out + 1] = ref
      end
    end
  else
    local p = find(list, words[2]) or { arguments = {} }
    for _, a in ipairs(p.arguments or {}) do
      if vim.startswith(a.name .. "=", arglead) then
        out[#out + 1] = a.name .. "="
      end
    end
  end
  table.sort(out)
  return out
end

--- The arguments object of the words after server:name.
function M.arguments(prompt, words)
  local args, loose = {}, {}
  for _, word in ipairs(words) do
    local key, value = word:match("^([%w_%-]+)=(.*)$")
    if key then
      args[key] = value
    else
      loose[#loose + 1] = word
    end
  end
  if #loose > 0 then
    for _, a in ipairs((prompt or {}).arguments or {}) do
      if args[a.name] == nil then
        args[a.name] = table.concat(loose, " ")
        break
      end
    end
  end
  return next(args) and args or nil
end

function M.run(opts)
  local commands = require("agent_lsp.commands")
  local client, c = commands.context()
  if not client or not c then
    return
  end
  local words = opts.fargs or {}
  local ref = table.remove(words, 1)
  local server, name = (ref or ""):match("^([^:]+):(.+)$")
  if not server then
    return vim.notify("agent_lsp: :AgentMcpPrompt server:name [arg=value ...] (Tab completes)", vim.log.levels.WARN)
  end
  local params = { server = server, name = name, arguments = M.arguments(find(cache[client.id] or prompts(client, 15000), ref), words) }
  if c.current then
    params.sessionId = c.current
  else
    params.workspaceUri = client_mod.workspace_uri(client)
  end
  client_mod.request(client, methods["agent/mcp/prompt/run"], params, function(err, result)
    if err then
      return vim.notify("agent_lsp: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    commands.show(c, require("agent_lsp.state").session(result.sessionId, client.id))
  end)
end

return M
