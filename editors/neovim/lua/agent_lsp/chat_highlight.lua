-- How the chat buffer is highlighted. By default with Vim's markdown syntax,
-- each fenced code block in its language: it works on the lines on screen,
-- so a long answer streams without stalls.
--
-- `chat.highlight = "treesitter"` uses tree-sitter's markdown instead. Its
-- parser goes over the whole transcript again at each change (appending a
-- line to 4,000 lines of markdown: 120-300 ms), so a long streamed answer
-- freezes the editor for a moment at every redraw (5,000 lines: 75 s of
-- redraws, 140 ms at the median; with the syntax, 0.2 s in all).
local M = {}

-- The code fence languages the chat highlights (`lang` or `alias=lang`).
M.FENCED = {
  "python", "py=python", "lua", "javascript", "js=javascript", "typescript", "ts=typescript",
  "sh", "bash=sh", "shell=sh", "console=sh", "json", "yaml", "toml", "rust", "go", "c", "cpp",
  "java", "ruby", "html", "css", "sql", "diff", "vim",
}

--- Start highlighting the chat buffer `buf` as `how` says ("syntax" | "treesitter");
--- returns what it uses ("treesitter" falls back to the syntax without its parser).
---@return "syntax"|"treesitter"
function M.start(buf, how)
  if how == "treesitter" and pcall(vim.treesitter.start, buf, "markdown") then
    return "treesitter"
  end
  -- The markdown syntax reads its fence languages once, as it loads for this buffer.
  local user = vim.g.markdown_fenced_languages
  local langs = vim.deepcopy(M.FENCED)
  for _, lang in ipairs(type(user) == "table" and user or {}) do
    langs[#langs + 1] = lang
  end
  vim.g.markdown_fenced_languages = langs
  vim.bo[buf].syntax = ""
  vim.bo[buf].syntax = "markdown"
  vim.g.markdown_fenced_languages = user
  return "syntax"
end

return M
