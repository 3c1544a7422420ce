-- agent/elicit: an MCP server asks the user for input while the agent works.
-- First a pick between answering and declining (the server's message is the
-- prompt), then one question per field of the requested form, in the form's
-- order (required fields first): vim.ui.select for a yes/no or a choice,
-- vim.ui.input for text and numbers. Dismissing any question cancels.
local permissions = require("agent_lsp.permissions")

local M = {}

local SKIP = {} -- an optional field the user left out

local function input(opts)
  return permissions.await(function(done)
    vim.ui.input(opts, done)
  end)
end

--- The form's fields in asking order: required ones first, then the rest by name.
function M.fields(schema)
  local properties = (schema or {}).properties or {}
  local required, seen, order = (schema or {}).required or {}, {}, {}
  for _, name in ipairs(required) do
    if properties[name] and not seen[name] then
      seen[name] = true
      order[#order + 1] = name
    end
  end
  local rest = vim.tbl_filter(function(name)
    return not seen[name]
  end, vim.tbl_keys(properties))
  table.sort(rest)
  vim.list_extend(order, rest)
  local is_required = {}
  for _, name in ipairs(required) do
    is_required[name] = true
  end
  return vim.tbl_map(function(name)
    return { name = name, prop = properties[name], required = is_required[name] or false }
  end, order)
end

--- The choices of an enum field: { {label, value}, ... }, or nil.
local function options(prop)
  if prop.enum then
    return vim.tbl_map(function(i)
      return { label = (prop.enumNames or {})[i] or tostring(prop.enum[i]), value = prop.enum[i] }
    end, vim.fn.range(1, #prop.enum))
  end
  if prop.oneOf then
    return vim.tbl_map(function(o)
      return { label = o.title or tostring(o.const), value = o.const }
    end, prop.oneOf)
  end
end

local function label(item)
  return item.label
end

--- Ask for one field: the value, SKIP when left out (optional), nil when dismissed.
local function ask(server, field)
  local prop = field.prop or {}
  local title = prop.title or field.name
  local prompt = ("agent_lsp: %s asks — %s%s"):format(server, title, prop.description and (" (" .. prop.description .. ")") or "")
  local choices = options(prop)
  if prop.type == "boolean" then
    choices = { { label = "Yes", value = true }, { label = "No", value = false } }
  end
  if choices then
    if not field.required then
      choices[#choices + 1] = { label = "(leave out)", value = SKIP }
    end
    local choice = permissions.select(choices, { prompt = prompt, kind = "agent_lsp_elicitation", format_item = label })
    if choice == nil then
      return nil
    end
    return choice.value
  end
  while true do
    local text = input({ prompt = prompt .. ": ", default = prop.default and tostring(prop.default) or nil })
    if text == nil then
      return nil
    end
    if text == "" and not field.required then
      return SKIP
    end
    if prop.type == "number" or prop.type == "integer" then
      local n = tonumber(text)
      if n and (prop.type == "number" or n == math.floor(n)) then
        return n
      end
      prompt = ("agent_lsp: %s wants a%s number — %s"):format(server, prop.type == "integer" and " whole" or "", title)
    elseif text ~= "" then
      return text
    end
  end
end

--- Handler of the server request agent/elicit -> {action, content?}.
function M.handle(_, params, _)
  params = params or {}
  local server = params.server or "an MCP server"
  local fields = M.fields(params.requestedSchema)
  local start = permissions.select({ { label = #fields > 0 and "Answer" or "Accept" }, { label = "Decline", decline = true } }, {
    prompt = ("agent_lsp: the MCP server %s asks: %s"):format(server, (params.message or ""):gsub("\n", " ")),
    kind = "agent_lsp_elicitation",
    format_item = label,
  })
  if start == nil then
    return { action = "cancel" }
  end
  if start.decline then
    return { action = "decline" }
  end
  local content = vim.empty_dict()
  for _, field in ipairs(fields) do
    local value = ask(server, field)
    if value == nil then
      return { action = "cancel" }
    end
    if value ~= SKIP then
      content[field.name] = value
    end
  end
  return { action = "accept", content = content }
end

return M
