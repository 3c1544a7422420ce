-- User hooks in the chat: each `hook/run` event is one folded line in the turn
-- ("⚑ hook PreToolUse ./check.sh · blocked: <reason>"), its details inside the fold.
local M = {}

local OUTCOMES = { allowed = "allowed", blocked = "blocked", failed = "failed", timeout = "timed out" }

local function one_line(s, max)
  s = tostring(s or ""):gsub("%s+", " ")
  if #s > max then
    s = vim.fn.strcharpart(s, 0, max - 1) .. "…"
  end
  return s
end

--- The header line and the folded body lines of a hook/run event's data.
function M.lines(data)
  local outcome = OUTCOMES[data.outcome] or tostring(data.outcome or "?")
  local header = ("▸ ⚑ hook %s %s · %s"):format(data.event or "?", one_line(data.command, 60), outcome)
  local message = data.message and data.message ~= "" and data.message or nil
  if message and data.outcome ~= "allowed" then
    header = header .. ": " .. one_line(message, 80)
  end
  local body = { ("  %s hook from %s"):format(data.source or "user", data.origin or "settings") }
  if type(data.exitCode) == "number" then
    body[#body + 1] = "  exit code " .. data.exitCode
  end
  for _, line in ipairs(message and vim.split(message, "\n", { plain = true }) or {}) do
    body[#body + 1] = "  " .. line
  end
  return header, body
end

return M
