-- :checkhealth agent_lsp — Neovim version, the server command, the model, and
-- the model connection of each running server (agent/model/check: one tiny real request)
-- and the sandbox its commands run in (`agent-lsp config show`).
local M = {}

local methods = require("agent_lsp.protocol").METHODS

local health = vim.health

-- The command that prints the server's version: the configured command with
-- its `serve`/transport arguments replaced by --version.
local function version_cmd(cmd, ...)
  local out = {}
  for _, arg in ipairs(cmd) do
    if arg == "serve" or arg == "--stdio" then
      break
    end
    out[#out + 1] = arg
  end
  local rest = { ... }
  if #rest == 0 then
    rest = { "--version" }
  end
  vim.list_extend(out, rest)
  return out
end

--- Which sandbox the agent's commands run in for this workspace, or why none
--- (the `sandbox` line of `agent-lsp config show`, with the plugin's shell settings).
local function check_sandbox(config, root)
  local cmd = config.options.cmd
  if type(cmd) ~= "table" or not root then
    return
  end
  local settings = config.options.settings or {}
  local args = { "config", "show", "--json", "-w", root }
  if type(settings.shell) == "table" then
    vim.list_extend(args, { "--settings", vim.json.encode({ shell = settings.shell }) })
  end
  local run_ok, result = pcall(function()
    return vim.system(version_cmd(cmd, unpack(args)), { text = true }):wait(10000)
  end)
  local decoded_ok, view = false, nil
  if run_ok and result and result.code == 0 then
    decoded_ok, view = pcall(vim.json.decode, result.stdout or "")
  end
  if not decoded_ok or type(view) ~= "table" or type(view.sandbox) ~= "string" then
    return health.warn("sandbox: `agent-lsp config show` did not say which sandbox commands run in")
  end
  if view.sandbox:find("^none") or view.sandbox:find("^off") then
    return health.warn("sandbox: " .. view.sandbox, {
      "Commands run unsandboxed and each is asked about. See docs/sandbox.md of agent_lsp.",
    })
  end
  health.ok("sandbox: " .. view.sandbox)
end

local function check_server(config, client_mod)
  local cmd = config.options.cmd
  if type(cmd) == "function" then
    health.ok("server command: a Lua function (not checked)")
    return
  end
  local ok, msg = client_mod.check_cmd()
  if not ok then
    health.error((msg:gsub("^agent_lsp: ", "")), {
      "pipx install /path/to/checkout (a checkout of agent_lsp; `pipx install agent-language-server` once it is published)",
      "or: require('agent_lsp').setup({ cmd = { '/path/to/agent-lsp', 'serve' } })",
    })
    return
  end
  local path = vim.fn.exepath(cmd[1])
  local run_ok, result = pcall(function()
    return vim.system(version_cmd(cmd), { text = true }):wait(10000)
  end)
  if run_ok and result and result.code == 0 then
    local version = vim.trim((result.stdout ~= "" and result.stdout or result.stderr) or "")
    health.ok(("server command: %s (%s) — %s"):format(table.concat(cmd, " "), path, version))
  else
    local why = run_ok and result and vim.trim(result.stderr or "") or tostring(result)
    health.warn(
      ("server command %s was found (%s) but `%s` failed: %s"):format(
        table.concat(cmd, " "),
        path,
        table.concat(version_cmd(cmd), " "),
        why
      ),
      { "Run the command in a terminal to see why it fails." }
    )
  end
end

local function check_model(config)
  local settings = config.options.settings or {}
  local model = type(settings.model) == "table" and settings.model or {}
  local provider = model.provider
  local env = vim.env
  if provider == nil or provider == "auto" then
    provider = env.AGENT_LSP_PROVIDER
  end
  if provider == "scripted" then
    health.ok("model: the scripted model (answers from a script; for tests and demos)")
  elseif provider == "openai" or provider == "anthropic" then
    local name = model.model or env.AGENT_LSP_MODEL or "(the provider's default model)"
    local key_var = provider == "openai" and "OPENAI_API_KEY" or "ANTHROPIC_API_KEY"
    if model.apiKey or env.AGENT_LSP_API_KEY or env[key_var] or model.baseUrl then
      health.ok(("model: %s %s"):format(provider, name))
    else
      health.error(("model: %s %s, but no API key is set"):format(provider, name), {
        ("Set %s (or AGENT_LSP_API_KEY) in the environment Neovim starts the server with."):format(key_var),
      })
    end
  elseif provider ~= nil then
    health.warn(("model: unknown provider %q"):format(provider), { "Use openai, anthropic or scripted." })
  elseif env.ANTHROPIC_API_KEY then
    health.ok("model: anthropic (auto-selected: ANTHROPIC_API_KEY is set)")
  elseif env.OPENAI_API_KEY then
    health.ok("model: openai (auto-selected: OPENAI_API_KEY is set)")
  else
    health.warn("model: none configured — the server answers with its scripted demo model", {
      "Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or settings.model = { provider = ..., model = ... } in setup().",
    })
  end
end

-- What to change for a failure's `setting`: a settings key goes in setup(), an
-- environment variable in the environment the server starts with.
local function fix_for(setting)
  if type(setting) ~= "string" then
    return {}
  end
  if setting:find("^model%.") then
    return { ("Change %s in setup({ settings = { model = { ... } } })."):format(setting) }
  end
  return { ("Change %s in the environment Neovim starts the server with (or cmd_env in setup())."):format(setting) }
end

--- One line per running server: does its configured model answer, and how fast.
local function check_connection(client_mod, client)
  local done, err, result = false, nil, nil
  client_mod.request(client, methods["agent/model/check"], {
    workspaceUri = client.config.root_dir and vim.uri_from_fname(client.config.root_dir) or nil,
  }, function(e, r)
    done, err, result = true, e, r
  end)
  vim.wait(40000, function()
    return done
  end, 20)
  if not done or err then
    return health.warn("model connection: the server did not answer the check: " .. (err and err.message or "timed out"))
  end
  local what = ("%s %s%s"):format(result.provider or "?", result.model or "?", result.url and (" at " .. result.url) or "")
  if result.ok then
    return health.ok(("model connection: %s answered in %s ms"):format(what, result.latencyMs or "?"))
  end
  local e = result.error or {}
  health.error(("model connection: %s failed: %s %s"):format(what, e.code or "?", e.message or ""), fix_for(e.setting))
end

function M.check()
  local config = require("agent_lsp.config")
  local client_mod = require("agent_lsp.client")

  health.start("agent_lsp")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. " is too old", { "agent_lsp needs Neovim 0.10 or newer." })
  end
  check_server(config, client_mod)
  check_model(config)

  local clients = client_mod.clients()
  if #clients == 0 then
    health.info("no agent_lsp server running (it starts when a file of a workspace is opened after setup())")
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    health.ok(
      ("server running for %s (%s %s)"):format(
        client.config.root_dir or "?",
        info.name or "agent-lsp",
        info.version or ""
      )
    )
    check_connection(client_mod, client)
    check_sandbox(config, client.config.root_dir)
    require("agent_lsp.mcp").check(client)
  end
  if #clients > 0 then
    require("agent_lsp.language").check(health)
  end
end

return M
