-- The input window of :AgentAsk / :AgentSteer without text: a floating
-- markdown buffer; <C-s>, <CR> in normal mode or :w sends it, q or <Esc> closes it.
local M = {}

local api = vim.api
local config = require("agent_lsp.config")

local count = 0

---@param opts {title: string, on_submit: fun(text: string), initial?: string[]}
---@return integer buf, integer win
function M.open(opts)
  local o = config.options.input
  count = count + 1
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, "agent-lsp://input/" .. count)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "markdown"
  if opts.initial then
    api.nvim_buf_set_lines(buf, 0, -1, false, opts.initial)
  end
  vim.bo[buf].modified = false
  local width = o.width < 1 and math.floor(vim.o.columns * o.width) or o.width
  local height = o.height < 1 and math.floor(vim.o.lines * o.height) or o.height
  width, height = math.max(width, 20), math.max(height, 1)
  local win_opts = {
    relative = "editor",
    width = width,
    height = height,
    row = math.max(math.floor((vim.o.lines - height) / 2) - 1, 0),
    col = math.floor((vim.o.columns - width) / 2),
    border = o.border,
    style = "minimal",
  }
  if o.border and o.border ~= "none" then -- a title needs a border
    win_opts.title = " " .. opts.title .. "  (<C-s> send · q cancel) "
    win_opts.title_pos = "center"
  end
  local win = api.nvim_open_win(buf, true, win_opts)
  vim.wo[win].wrap = true

  local done = false
  local function close()
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
    if vim.fn.mode() ~= "n" then
      vim.cmd("stopinsert")
    end
  end
  local function submit()
    if done then
      return
    end
    done = true
    local text = vim.trim(table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
    close()
    if text ~= "" then
      opts.on_submit(text)
    end
  end
  local function cancel()
    done = true
    close()
  end
  local map = function(modes, lhs, fn)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  map({ "n", "i" }, "<C-s>", submit)
  map("n", "<CR>", submit)
  map("n", "q", cancel)
  map("n", "<Esc>", cancel)
  api.nvim_create_autocmd("BufWriteCmd", { buffer = buf, callback = submit })
  vim.cmd("startinsert")
  return buf, win
end

return M
