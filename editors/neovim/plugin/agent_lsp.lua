-- agent_lsp: commands and <Plug> mappings. No global mappings are defined;
-- the server starts once require("agent_lsp").setup() is called (or on the
-- first command, with the defaults).
if vim.g.loaded_agent_lsp then
  return
end
vim.g.loaded_agent_lsp = 1

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_echo({ { "agent_lsp needs Neovim 0.10 or newer", "ErrorMsg" } }, true, {})
  return
end

local function run(name)
  return function(opts)
    require("agent_lsp.commands")[name](opts)
  end
end

local function session_ids()
  local ids = {}
  for id in pairs(require("agent_lsp.state").sessions) do
    ids[#ids + 1] = id
  end
  table.sort(ids)
  return ids
end

local command = vim.api.nvim_create_user_command
command("AgentAsk", run("ask"), { nargs = "*", range = true, desc = "agent_lsp: ask the agent (a range attaches the selection)" })
command("AgentSteer", run("steer"), { nargs = "*", range = true, desc = "agent_lsp: steer the running turn" })
command("AgentAttach", function(opts)
  require("agent_lsp.images").attach(opts)
end, { nargs = "?", bang = true, complete = "file", desc = "agent_lsp: attach an image to the next message (! removes them)" })
command("AgentImage", function()
  require("agent_lsp.images").open_under_cursor()
end, { nargs = 0, desc = "agent_lsp: open the image of the [image: …] line under the cursor" })
command("AgentQueue", run("queue"), { nargs = 0, desc = "agent_lsp: show and remove queued messages" })
command("AgentCancel", run("cancel"), { nargs = 0, desc = "agent_lsp: cancel the running turn" })
command("AgentNew", run("new"), { nargs = 0, desc = "agent_lsp: start a new session" })
command("AgentSessions", run("sessions"), {
  nargs = "*",
  desc = "agent_lsp: resume or delete a stored session (with words: one whose title or messages have them)",
})
command("AgentResume", run("resume"), {
  nargs = "?",
  complete = function()
    return session_ids()
  end,
  desc = "agent_lsp: resume a stored session",
})
command("AgentSessionExport", function(opts)
  local client, c = require("agent_lsp.commands").context()
  if not client or not c then
    return
  end
  if not c.current then
    return vim.notify("agent_lsp: no session to export", vim.log.levels.WARN)
  end
  local method = require("agent_lsp.protocol").METHODS["agent/session/export"]
  require("agent_lsp.client").request(client, method, { sessionId = c.current }, function(err, result)
    if err then
      return vim.notify("agent_lsp: export failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    local lines = vim.split(result.markdown, "\n", { plain = true })
    if lines[#lines] == "" then
      table.remove(lines)
    end
    local file = vim.trim(opts.args or "")
    if file == "" then -- a new Markdown buffer, to read or :write
      vim.cmd("botright new")
      vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
      vim.bo.filetype = "markdown"
    elseif vim.fn.writefile(lines, vim.fn.expand(file)) == 0 then
      vim.notify("agent_lsp: exported the session to " .. file)
    else
      vim.notify("agent_lsp: could not write " .. file, vim.log.levels.ERROR)
    end
  end)
end, { nargs = "?", complete = "file", desc = "agent_lsp: the session as Markdown, in a new buffer or written to FILE" })
command("AgentRevert", run("revert"), { nargs = "?", desc = "agent_lsp: revert the file edits of a turn" })
local function control(name)
  return function(opts)
    require("agent_lsp.session_control")[name](opts)
  end
end
command("AgentRewind", control("rewind"), {
  nargs = "?",
  bang = true,
  desc = "agent_lsp: rewind the history to before a turn (! also reverts its files)",
})
command("AgentFork", control("fork"), { nargs = "?", desc = "agent_lsp: fork the session at a turn" })
command("AgentQueueEdit", control("queue_edit"), { nargs = 0, desc = "agent_lsp: edit, move, send now or remove a queued message" })
command("AgentQueuePause", control("queue_pause"), { nargs = 0, desc = "agent_lsp: pause the queue" })
command("AgentQueueResume", control("queue_resume"), { nargs = 0, desc = "agent_lsp: resume the queue" })
command("AgentModel", function(opts)
  require("agent_lsp.model").command(opts)
end, {
  nargs = "*",
  complete = function(arglead, cmdline)
    return require("agent_lsp.model").complete(arglead, cmdline)
  end,
  desc = "agent_lsp: switch the session's model (and reasoning effort)",
})
command("AgentLog", run("log"), {
  nargs = "?",
  complete = function()
    return { "events", "lsp" }
  end,
  desc = "agent_lsp: the session's event log, or the LSP log",
})
command("AgentFix", function(opts)
  require("agent_lsp.fix").fix(opts)
end, { nargs = 0, range = true, desc = "agent_lsp: fix the problems (every source's diagnostics) under the cursor" })
command("AgentRetry", function()
  require("agent_lsp.retry").command()
end, { nargs = 0, desc = "agent_lsp: send the message of the failed last turn again" })
command("AgentPermissions", function()
  require("agent_lsp.permission_rules").open()
end, { nargs = 0, desc = "agent_lsp: list and revoke the remembered permission rules" })
command("AgentPermission", function(opts)
  require("agent_lsp.permissions").command(opts)
end, {
  nargs = 1,
  complete = function()
    return { "once", "session", "always", "deny", "diff" }
  end,
  desc = "agent_lsp: answer the waiting permission question (diff: show its diff)",
})
command("AgentDiff", run("diff"), { nargs = 0, desc = "agent_lsp: show the diff of an agent edit" })
command("AgentChat", run("chat"), { nargs = 0, desc = "agent_lsp: open or close the chat" })
command("AgentPlan", function(opts)
  require("agent_lsp.plan").command(opts)
end, {
  nargs = "?",
  complete = function()
    return { "on", "off" }
  end,
  desc = "agent_lsp: plan mode on, off or toggled (the agent reads and plans, edits nothing)",
})
command("AgentReview", function(opts)
  require("agent_lsp.review").command(opts)
end, {
  nargs = "?",
  complete = function()
    return { "keep", "undo" }
  end,
  desc = "agent_lsp: list the agent's changes waiting for review, or keep / undo all of them",
})
command("AgentMcpPrompt", function(opts)
  require("agent_lsp.mcp_prompts").run(opts)
end, {
  nargs = "+",
  complete = function(arglead, cmdline)
    return require("agent_lsp.mcp_prompts").complete(arglead, cmdline)
  end,
  desc = "agent_lsp: run an MCP server's prompt (server:name [arg=value ...]) as your next message",
})
command("AgentSubagent", function()
  require("agent_lsp.subagents").open()
end, { nargs = 0, desc = "agent_lsp: open the transcript of the sub-agent under the cursor" })
command("AgentMcp", function()
  require("agent_lsp.mcp").open()
end, { nargs = 0, desc = "agent_lsp: the MCP servers and their state" })
command("AgentMcpAuthorize", function(opts)
  require("agent_lsp.mcp").authorize(opts.args)
end, {
  nargs = 1,
  complete = function(arglead)
    return require("agent_lsp.mcp").complete_servers(arglead, "authorize")
  end,
  desc = "agent_lsp: trust an MCP server, or sign in to it in the browser",
})
command("AgentMcpLogout", function(opts)
  require("agent_lsp.mcp").logout(opts.args)
end, {
  nargs = 1,
  complete = function(arglead)
    return require("agent_lsp.mcp").complete_servers(arglead, "logout")
  end,
  desc = "agent_lsp: forget an MCP server's OAuth tokens",
})
command("AgentSkill", function(opts)
  require("agent_lsp.skills").command(opts)
end, {
  nargs = "*",
  complete = function(arg_lead, cmd_line)
    return require("agent_lsp.skills").complete(arg_lead, cmd_line)
  end,
  desc = "agent_lsp: run a skill (its name, then your text)",
})

local plug = vim.keymap.set
plug("n", "<Plug>(AgentAsk)", "<Cmd>AgentAsk<CR>", { desc = "agent_lsp: ask the agent" })
plug("x", "<Plug>(AgentAsk)", ":AgentAsk<CR>", { silent = true, desc = "agent_lsp: ask about the selection" })
plug("n", "<Plug>(AgentSteer)", "<Cmd>AgentSteer<CR>", { desc = "agent_lsp: steer the running turn" })
plug("x", "<Plug>(AgentSteer)", ":AgentSteer<CR>", { silent = true, desc = "agent_lsp: steer with the selection" })
plug("n", "<Plug>(AgentCancel)", "<Cmd>AgentCancel<CR>", { desc = "agent_lsp: cancel the running turn" })
plug("n", "<Plug>(AgentQueue)", "<Cmd>AgentQueue<CR>", { desc = "agent_lsp: queued messages" })
plug("n", "<Plug>(AgentNew)", "<Cmd>AgentNew<CR>", { desc = "agent_lsp: new session" })
plug("n", "<Plug>(AgentSessions)", "<Cmd>AgentSessions<CR>", { desc = "agent_lsp: sessions" })
plug("n", "<Plug>(AgentChat)", "<Cmd>AgentChat<CR>", { desc = "agent_lsp: toggle the chat" })
plug("n", "<Plug>(AgentDiff)", "<Cmd>AgentDiff<CR>", { desc = "agent_lsp: diff of an agent edit" })
