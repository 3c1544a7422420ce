-- Options of require("agent_lsp").setup(): the documented defaults and the merge.
local M = {}

---@class agent_lsp.Config
M.defaults = {
  -- The server command (stdio). Any list accepted by vim.lsp.start's `cmd`.
  cmd = { "agent-lsp", "serve" },
  -- Extra environment for the server process.
  cmd_env = nil,
  -- A buffer's workspace is the nearest folder holding one of these; else the cwd.
  root_markers = { ".git", "AGENTS.md", "pyproject.toml", "package.json", "Cargo.toml", "go.mod", ".hg" },
  -- Start the server for file buffers as they are opened. nil = every filetype.
  autostart = true,
  filetypes = nil,
  -- Sent as initializationOptions: the `agentLsp` settings object of the server
  -- (model = { provider, model, ... }, sessionsDir, ...).
  settings = {},
  -- Write buffers the agent edited (agent/saveDocuments, workspace/applyEdit).
  save_agent_edits = true,
  -- didChange debounce for the agent client, in ms. 0 keeps the server's view of
  -- a buffer exact when it edits right after another edit.
  debounce_text_changes = 0,
  chat = {
    -- "right" | "left" | "top" | "bottom" | "tab"
    position = "right",
    -- columns (right/left) or lines (top/bottom); a number below 1 is a fraction of the editor.
    size = 0.4,
    -- Open the chat when a question is sent.
    auto_open = true,
    -- Tool output lines shown in a tool section before "… N more lines".
    max_tool_lines = 40,
    -- "syntax": Vim's markdown syntax, code fences in their language (smooth
    -- while a long answer streams); "treesitter": tree-sitter's markdown (it
    -- parses the whole transcript at each change: long answers stall).
    highlight = "syntax",
    -- Buffer-local keys of the chat buffer (false disables one).
    keymaps = {
      cancel = "<C-c>",
      ask = "i",
      diff = "gd",
      close = "q",
    },
  },
  -- Reviewing the agent's edits (settings.edits.review = "review"): signs on the
  -- pending hunks and buffer-local keys in the buffers that have some (false disables one).
  review = {
    sign = "▎",
    keymaps = {
      next = "]h",
      prev = "[h",
      keep = "<leader>ak",
      undo = "<leader>au",
    },
  },
  input = {
    -- The input window opened by :AgentAsk without text. Submit with <C-s> or :w.
    width = 0.6,
    height = 8,
    border = "rounded",
  },
  permissions = {
    -- "chat": the question is drawn at the end of the chat, answered with a key
    -- below (or :AgentPermission); "select": vim.ui.select.
    ui = "chat",
    -- Keys of the chat buffer while a question waits (false disables one);
    -- `diff`: an edit's diff (edits.review = "ask") in a split.
    keymaps = { once = "a", session = "s", always = "A", deny = "d", diff = "D" },
    -- A key pressed within this many ms of a question's appearing answers nothing
    -- (it was typed for something else).
    guard_ms = 600,
  },
  -- When a turn ends or a question waits while Neovim does not have the focus:
  -- vim.notify, the terminal bell, a command given the text (e.g. { "notify-send", "agent_lsp" }),
  -- or hook(kind, text) instead of all three (kind "done" | "waiting").
  attention = { enabled = true, notify = true, bell = false, command = nil, hook = nil, when_focused = false },
  status = {
    idle = "agent idle",
    running = "agent running",
    waiting = "agent waiting for you",
    queued = "%d queued",
  },
}

M.options = vim.deepcopy(M.defaults)

---@param opts table|nil
function M.set(opts)
  opts = opts or {}
  for _, key in ipairs({ "root_markers", "settings", "chat", "input", "permissions", "status", "review" }) do
    if opts[key] ~= nil and type(opts[key]) ~= "table" then
      error(("agent_lsp.setup: `%s` must be a table, got %s"):format(key, type(opts[key])), 3)
    end
  end
  if opts.cmd ~= nil and type(opts.cmd) ~= "table" and type(opts.cmd) ~= "function" then
    error("agent_lsp.setup: `cmd` must be a list of strings or a function", 3)
  end
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace, never merge by index.
  if opts.cmd then
    M.options.cmd = opts.cmd
  end
  if opts.root_markers then
    M.options.root_markers = opts.root_markers
  end
  return M.options
end

return M
