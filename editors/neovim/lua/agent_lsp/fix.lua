-- :AgentFix — ask the agent to fix the problems under the cursor (or in a
-- range). Neovim sends a language server only that server's diagnostics with a
-- code action request, so agent_lsp never sees pyright's or ruff's: this
-- command gathers the diagnostics of every source itself and sends them as
-- context; with none, it asks the agent to find the problem in those lines.
local M = {}

local methods = require("agent_lsp.protocol").METHODS

local api = vim.api

local FIND_PROMPT = "Find the problem in this code and fix it."

-- The LSP range of a diagnostic: the server's own when it came from LSP, else its lines.
local function lsp_range(d)
  local lsp = d.user_data and d.user_data.lsp
  if type(lsp) == "table" and type(lsp.range) == "table" then
    return lsp.range
  end
  return { start = { line = d.lnum, character = 0 }, ["end"] = { line = (d.end_lnum or d.lnum) + 1, character = 0 } }
end

local function lines_text(buf, first, last)
  return table.concat(api.nvim_buf_get_lines(buf, first, last + 1, false), "\n")
end

--- The message and context items of a fix request for lines [first, last] (0-based) of `buf`.
function M.request(buf, first, last)
  local uri = vim.uri_from_bufnr(buf)
  local found = vim.tbl_filter(function(d)
    return d.lnum <= last and (d.end_lnum or d.lnum) >= first
  end, vim.diagnostic.get(buf))
  if #found == 0 then
    return FIND_PROMPT, {
      {
        kind = "selection",
        uri = uri,
        range = { start = { line = first, character = 0 }, ["end"] = { line = last + 1, character = 0 } },
        text = lines_text(buf, first, last),
      },
    }
  end
  local context, problems = {}, {}
  for _, d in ipairs(found) do
    local message = d.source and (d.source .. ": " .. d.message) or d.message
    problems[#problems + 1] = message
    context[#context + 1] = {
      kind = "diagnostic",
      uri = uri,
      range = lsp_range(d),
      message = message,
      text = lines_text(buf, d.lnum, d.end_lnum or d.lnum),
    }
  end
  if #problems == 1 then
    return "Fix this problem: " .. problems[1], context
  end
  return "Fix these problems:\n- " .. table.concat(problems, "\n- "), context
end

--- :AgentFix [range]
function M.fix(opts)
  local commands = require("agent_lsp.commands")
  local client, c = commands.context()
  if not client or not c then
    return
  end
  local buf = api.nvim_get_current_buf()
  local first, last
  if opts and (opts.range or 0) > 0 then
    first, last = opts.line1 - 1, opts.line2 - 1
  else
    local row = api.nvim_win_get_cursor(0)[1] - 1
    first, last = row, row
  end
  local text, context = M.request(buf, first, last)
  commands.send(client, c, methods["agent/followup"], text, context)
end

return M
