-- Skills the user invokes: :AgentSkill name [text] runs one (agent/skill/run)
-- in the chat's session; without a name, vim.ui.select offers the list.
local M = {}

local client_mod = require("agent_lsp.client")
local methods = require("agent_lsp.protocol").METHODS

local function notify(msg, level)
  vim.notify("agent_lsp: " .. msg, level or vim.log.levels.INFO)
end

--- The workspace's skills (agent/skill/list), waited for: the completion and the picker need them now.
function M.list(client)
  local err, result = client_mod.request_sync(client, methods["agent/skill/list"], { workspaceUri = client_mod.workspace_uri(client) }, 3000)
  if err then
    notify("agent/skill/list failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    return {}
  end
  return result and result.skills or {}
end

--- Completion of :AgentSkill's first argument: the skills' names.
function M.complete(arg_lead, cmd_line)
  if cmd_line:match("^%s*%S+%s+%S+%s") then
    return {} -- past the name: the user's own text
  end
  local client = client_mod.clients()[1]
  if not client then
    return {}
  end
  local names = {}
  for _, skill in ipairs(M.list(client)) do
    if skill.name:sub(1, #arg_lead) == arg_lead then
      names[#names + 1] = skill.name
    end
  end
  table.sort(names)
  return names
end

local function run(client, c, name, arguments)
  local commands = require("agent_lsp.commands")
  local s = c.current and require("agent_lsp.state").sessions[c.current] or nil
  local params = { name = name, arguments = arguments ~= "" and arguments or nil }
  if s then
    params.sessionId = s.id
  else
    params.workspaceUri = client_mod.workspace_uri(client)
  end
  client_mod.request(client, methods["agent/skill/run"], params, function(err, result)
    if err then
      return notify(("skill %s failed: %s"):format(name, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    commands.show(c, require("agent_lsp.state").session(result.sessionId, client.id), true)
    require("agent_lsp.chat").follow(c)
  end)
end

--- :AgentSkill [name [text]]
function M.command(opts)
  local commands = require("agent_lsp.commands")
  local client, c = commands.context()
  if not client or not c then
    return
  end
  local name, arguments = vim.trim(opts and opts.args or ""):match("^(%S*)%s*(.*)$")
  if name ~= "" then
    return run(client, c, name, arguments)
  end
  local skills = M.list(client)
  if #skills == 0 then
    return notify("no skills in this workspace (.agents/skills/<name>/SKILL.md)")
  end
  vim.ui.select(skills, {
    prompt = "agent_lsp: run skill",
    kind = "agent_lsp_skill",
    format_item = function(skill)
      return ("%s — %s (%s)"):format(skill.name, skill.description or "", skill.source or "?")
    end,
  }, function(skill)
    if skill then
      run(client, c, skill.name, "")
    end
  end)
end

return M
