-- :AgentPermissions — the permission rules of the current workspace in a
-- scratch buffer, one per line, with where each comes from. `dd` or `x` on a
-- remembered rule (an "Always allow" or "Allow for session" answer) revokes
-- it: the next such call asks again. Rules of the settings or the managed
-- policy are shown too, and are changed in the file that holds them.
-- `r` reloads, `q` closes.
local M = {}

local api = vim.api
local client_mod = require("agent_lsp.client")
local methods = require("agent_lsp.protocol").METHODS

-- The rules each open list shows, by buffer (line 2 is the first rule).
local shown = {}

local function notify(msg, level)
  vim.notify("agent_lsp: " .. msg, level or vim.log.levels.INFO)
end

--- The line of one rule: scope, action, tool, what it covers, where it comes from.
function M.line(rule)
  local covers = rule.commandPrefix and ("$ " .. rule.commandPrefix) or rule.pathGlob or "(any)"
  local mark = rule.revocable and " " or "·"
  return ("%s %-9s %-5s %-20s %s  — %s"):format(mark, rule.scope, rule.action, rule.tool, covers, rule.source)
end

local function render(buf, root, rules)
  shown[buf] = rules
  local lines = {
    ("Permission rules of %s — dd/x revokes a remembered one (·: change it where it is written), r reloads, q closes"):format(
      vim.fn.fnamemodify(root or ".", ":~")
    ),
  }
  for _, rule in ipairs(rules) do
    lines[#lines + 1] = M.line(rule)
  end
  if #rules == 0 then
    lines[#lines + 1] = "  (no rules: every question is asked; answer \"Always allow\" to remember one)"
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

local function load(client, buf)
  local root = client.config.root_dir
  local params = root and { workspaceUri = vim.uri_from_fname(root) } or {}
  client_mod.request(client, methods["agent/permission/rules"], params, function(err, result)
    if err then
      return notify("listing the permission rules failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if api.nvim_buf_is_valid(buf) then
      render(buf, root, result.rules or {})
    end
  end)
end

local function revoke(client, buf)
  local rules = shown[buf] or {}
  local rule = rules[api.nvim_win_get_cursor(0)[1] - 1]
  if not rule then
    return
  end
  if not rule.revocable then
    return notify(("this rule comes from %s: change it there"):format(rule.source), vim.log.levels.WARN)
  end
  client_mod.request(client, methods["agent/permission/revoke"], { id = rule.id, workspaceUri = rule.workspaceUri }, function(err, result)
    if err then
      return notify("revoking the rule failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if api.nvim_buf_is_valid(buf) then
      render(buf, client.config.root_dir, result.rules or {})
    end
  end)
end

--- :AgentPermissions
function M.open()
  require("agent_lsp").ensure_setup()
  local client = client_mod.for_buffer(0)
  if not client then
    return notify("no agent server for this buffer", vim.log.levels.WARN)
  end
  local name = "agent-lsp://permissions/" .. vim.fs.basename(client.config.root_dir or "workspace")
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    vim.bo[buf].modifiable = false
    api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      once = true,
      callback = function()
        shown[buf] = nil
      end,
    })
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "agent_lsp: " .. desc })
    end
    map("dd", function()
      revoke(client, buf)
    end, "revoke the rule under the cursor")
    map("x", function()
      revoke(client, buf)
    end, "revoke the rule under the cursor")
    map("r", function()
      load(client, buf)
    end, "reload the rules")
    map("q", "<Cmd>close<CR>", "close")
  end
  if #vim.fn.win_findbuf(buf) == 0 then
    vim.cmd("botright split")
    api.nvim_win_set_buf(0, buf)
  else
    api.nvim_set_current_win(vim.fn.win_findbuf(buf)[1])
  end
  load(client, buf)
end

return M
