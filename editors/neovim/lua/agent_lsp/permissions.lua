-- agent/permission: the agent asks before a risky action; the user answers
-- through vim.ui.select (any picker plugin that replaces it works too), with
-- only the answers the server honours (params.choices) and, for a command it
-- always confirms, the reason in the prompt.
local M = {}

M.choices = {
  { answer = "once", label = "Allow once" },
  { answer = "session", label = "Allow for this session" },
  { answer = "always", label = "Always allow" },
  { answer = "deny", label = "Deny" },
}

--- Wait for a UI answer from inside a server request (a coroutine), whether
--- the UI calls back at once or later: `begin(done)` starts the question and
--- calls done(answer) once.
---@return any|nil answer
function M.await(begin)
  local co, is_main = coroutine.running()
  local done, suspended, result = false, false, nil
  if not co or is_main then
    -- Not in a coroutine (older Neovim): wait for the answer in the event loop.
    begin(function(answer)
      done, result = true, answer
    end)
    vim.wait(10 * 60 * 1000, function()
      return done
    end, 20)
    return result
  end
  begin(function(answer)
    if done then
      return
    end
    done, result = true, answer
    if suspended then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not done then
    suspended = true
    coroutine.yield()
  end
  return result
end

--- vim.ui.select from inside a server request.
---@return any|nil choice
function M.select(items, opts)
  return M.await(function(done)
    vim.ui.select(items, opts, done)
  end)
end

--- The one-line question shown for a permission request.
function M.prompt(params)
  local parts = { params.title or ("Allow " .. tostring(params.tool or "the agent") .. "?") }
  if params.command and not (params.title or ""):find(params.command, 1, true) then
    parts[#parts + 1] = "$ " .. params.command
  end
  if params.path and not (params.title or ""):find(params.path, 1, true) then
    parts[#parts + 1] = params.path
  end
  local shown = table.concat(parts, " ")
  if params.detail and params.detail ~= "" and not shown:find(params.detail, 1, true) then
    parts[#parts + 1] = params.detail
  end
  if params.asksEveryTime then
    parts[#parts + 1] = params.asksEveryTime
  end
  return "agent_lsp: " .. table.concat(parts, " — "):gsub("\n", " ")
end

--- The answers to offer: those the server lists (every answer for an older
--- server), Deny always among them.
function M.offered(params)
  local allowed = {}
  for _, answer in ipairs(params.choices or { "once", "session", "always", "deny" }) do
    allowed[answer] = true
  end
  allowed.deny = true
  return vim.tbl_filter(function(c)
    return allowed[c.answer]
  end, M.choices)
end

--- Handler of the server request agent/permission -> {answer}.
function M.handle_permission(_, params, _)
  params = params or {}
  local choice = M.select(M.offered(params), {
    prompt = M.prompt(params),
    kind = "agent_lsp_permission",
    format_item = function(item)
      return item.label
    end,
  })
  return { answer = choice and choice.answer or "deny" }
end

--- window/showMessageRequest (the generic fallback): Neovim's own handler.
function M.handle_message_request(err, params, ctx)
  return vim.lsp.handlers["window/showMessageRequest"](err, params, ctx)
end

return M
