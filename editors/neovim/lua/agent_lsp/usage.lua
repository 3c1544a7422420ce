-- Token usage and estimated cost of a session, for the chat window bar.
-- The server records each turn's `usage` and the session's `sessionUsage` on
-- `turn/end`; `costUsd` is an estimate from list prices, shown as one ("~$", "est.").
local M = {}

--- "~$0.0046" (or "~$1.23").
function M.format_cost(usd)
  if usd >= 0.1 then
    return ("~$%.2f"):format(usd)
  end
  return ("~$%.4f"):format(usd)
end

--- The winbar part of the session's total: "session ~$0.0074 est. (2k cached)", or nil.
function M.winbar_part(session_usage, human)
  if type(session_usage) ~= "table" then
    return nil
  end
  local parts = {}
  if type(session_usage.costUsd) == "number" then
    parts[#parts + 1] = "session " .. M.format_cost(session_usage.costUsd) .. " est."
  end
  local cached = session_usage.cacheReadTokens or 0
  if cached > 0 then
    parts[#parts + 1] = ("%s cached"):format(human(cached))
  end
  if #parts == 0 then
    return nil
  end
  return table.concat(parts, " ")
end

return M
