-- MCP servers: the server list (:AgentMcp, :checkhealth agent_lsp), signing
-- in and out (:AgentMcpAuthorize, :AgentMcpLogout) and the names of MCP tools
-- on tool cards ("time › get_current_time").
local M = {}

local methods = require("agent_lsp.protocol").METHODS

--- "mcp__time__get_current_time" -> "time › get_current_time"; other names as they are.
function M.tool_title(name)
  local server, tool = tostring(name or ""):match("^mcp__(.-)__(.+)$")
  if server and server ~= "" then
    return server .. " › " .. tool
  end
  return name
end

--- One line per server of agent/mcp/list, then its reason indented.
function M.lines(servers)
  if #servers == 0 then
    return { "No MCP servers are configured (config.toml [mcpServers], .mcp.json, or the mcpServers setting)." }
  end
  local lines = {}
  for _, s in ipairs(servers) do
    local state = s.state or "?"
    if state == "ready" then
      local n = s.toolCount or 0
      state = ("ready · %d tool%s"):format(n, n == 1 and "" or "s")
    elseif state == "needs-authorization" then
      state = "needs authorization"
    end
    local line = ("%-20s %-22s %s"):format(s.name or "?", state, s.source or "")
    if s.transport then
      line = line .. " · " .. s.transport
    end
    if (s.restarts or 0) > 0 then
      line = line .. (" · %d restart%s"):format(s.restarts, s.restarts == 1 and "" or "s")
    end
    if s.authorization == "oauth" then
      line = line .. (s.signedIn and " · signed in" or " · not signed in")
    end
    lines[#lines + 1] = line
    if s.reason and s.reason ~= "" then
      lines[#lines + 1] = "    " .. s.reason
    end
    if s.state == "ready" and type(s.tools) == "table" and #s.tools > 0 then
      lines[#lines + 1] = "    tools: " .. table.concat(s.tools, ", ")
    end
  end
  return lines
end

local function list_params(client)
  return { workspaceUri = require("agent_lsp.client").workspace_uri(client) }
end

--- :AgentMcp — a scratch buffer listing the workspace's MCP servers (`q` closes it, `R` refreshes).
function M.open()
  local commands = require("agent_lsp.commands")
  local client = commands.context()
  if not client then
    return
  end
  require("agent_lsp.client").request(client, methods["agent/mcp/list"], list_params(client), function(err, result)
    if err then
      return vim.notify("agent_lsp: agent/mcp/list failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    local buf = commands.scratch("agent-lsp://mcp", M.lines(result and result.servers or {}), "agent_lsp_mcp")
    vim.keymap.set("n", "R", function()
      vim.cmd("close")
      M.open()
    end, { buffer = buf, silent = true, nowait = true, desc = "agent_lsp: refresh the MCP servers" })
  end)
end

--- The :checkhealth section of one running server: each MCP server as ok / warn / error.
function M.check(client)
  local health = vim.health
  local err, result = require("agent_lsp.client").request_sync(client, methods["agent/mcp/list"], list_params(client), 5000)
  if err then
    return health.warn("MCP servers: agent/mcp/list failed: " .. (err.message or vim.inspect(err)))
  end
  local servers = result and result.servers or {}
  if #servers == 0 then
    return health.info("MCP servers: none configured")
  end
  for _, s in ipairs(servers) do
    local line = M.lines({ s })
    local text = "MCP " .. vim.trim(line[1]) .. (line[2] and (" — " .. vim.trim(line[2])) or "")
    if s.state == "ready" or s.state == "starting" or s.state == "stopped" then
      health.ok(text)
    elseif s.state == "needs-authorization" then
      health.warn(text, { "Run :AgentMcpAuthorize " .. (s.name or "{server}") .. " (trust it, or sign in in the browser)." })
    else
      health.error(text, { "See :AgentLog lsp for the server's log, or fix its entry and save the file." })
    end
  end
end

local function servers_sync(client)
  local err, result = require("agent_lsp.client").request_sync(client, methods["agent/mcp/list"], list_params(client), 5000)
  return (not err and result and result.servers) or {}
end

--- Completion of :AgentMcpAuthorize (servers that authorize) and :AgentMcpLogout (servers signed in).
function M.complete_servers(arglead, which)
  local client = require("agent_lsp.commands").context()
  if not client then
    return {}
  end
  local out = {}
  for _, s in ipairs(servers_sync(client)) do
    local fits = which == "logout" and s.signedIn or (which ~= "logout" and s.authorization ~= nil)
    if fits and vim.startswith(s.name, arglead) then
      out[#out + 1] = s.name
    end
  end
  table.sort(out)
  return out
end

local function server_request(method, name, on_result)
  local client = require("agent_lsp.commands").context()
  if not client then
    return
  end
  local params = vim.tbl_extend("force", list_params(client), { server = name })
  require("agent_lsp.client").request(client, method, params, function(err, result)
    if err then
      return vim.notify(("agent_lsp: %s %s failed: %s"):format(method, name, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    on_result(result or {})
  end)
end

--- :AgentMcpAuthorize {server} — trust the server, or sign in to it in the browser (agent/mcp/authorize).
function M.authorize(name)
  vim.notify(("agent_lsp: authorizing the MCP server '%s' (a sign-in opens in your browser)…"):format(name), vim.log.levels.INFO)
  server_request(methods["agent/mcp/authorize"], name, function(s)
    local line = vim.trim(M.lines({ s })[1]):gsub("%s+", " ")
    if s.state == "ready" then
      vim.notify("agent_lsp: MCP " .. line, vim.log.levels.INFO)
    else
      vim.notify("agent_lsp: MCP " .. line .. (s.reason and (" — " .. s.reason) or ""), vim.log.levels.WARN)
    end
  end)
end

--- :AgentMcpLogout {server} — forget the server's OAuth tokens (agent/mcp/logout).
function M.logout(name)
  server_request(methods["agent/mcp/logout"], name, function()
    vim.notify(("agent_lsp: signed out of the MCP server '%s'"):format(name), vim.log.levels.INFO)
  end)
end

return M
