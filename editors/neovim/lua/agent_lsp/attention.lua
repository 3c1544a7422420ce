-- Attention when away: when a turn ends or a question waits for the user while
-- Neovim does not have the focus (FocusLost, from a terminal that reports focus),
-- the user is told: vim.notify, and optionally the terminal bell and a command
-- such as notify-send. `attention` in setup(): { enabled, notify, bell, command,
-- hook, when_focused }; `hook(kind, text)` replaces the rest ("done" | "waiting").
local M = {}

--- Whether Neovim has the focus (true until a FocusLost says otherwise).
M.focused = true

local group = vim.api.nvim_create_augroup("agent_lsp.attention", { clear = true })
vim.api.nvim_create_autocmd("FocusLost", {
  group = group,
  callback = function()
    M.focused = false
  end,
})
vim.api.nvim_create_autocmd("FocusGained", {
  group = group,
  callback = function()
    M.focused = true
  end,
})

local function options()
  return require("agent_lsp.config").options.attention or {}
end

--- Tell the user who looked away: `kind` "done" (a turn ended) or "waiting" (a question).
function M.alert(kind, text)
  local opts = options()
  if opts.enabled == false or (M.focused and not opts.when_focused) then
    return
  end
  if type(opts.hook) == "function" then
    pcall(opts.hook, kind, text)
    return
  end
  if opts.notify ~= false then
    vim.notify(text, kind == "waiting" and vim.log.levels.WARN or vim.log.levels.INFO)
  end
  if opts.bell then
    io.stdout:write("\a")
  end
  if type(opts.command) == "table" and #opts.command > 0 then
    local argv = vim.list_extend(vim.deepcopy(opts.command), { text })
    pcall(vim.system, argv, { detach = true })
  end
end

--- A live turn/end of session `s`: a turn finished (or stopped) while the user was away.
function M.turn_ended(s, data)
  local reason = type(data.reason) == "table" and data.reason.kind or data.reason
  local what = reason == "completed" and "finished" or ("ended: " .. tostring(reason))
  local c = require("agent_lsp.state").clients[s.client_id]
  local where = c and c.root and vim.fs.basename(c.root) or "the workspace"
  M.alert("done", ("agent_lsp: the agent's turn %s in %s"):format(what, where))
end

return M
