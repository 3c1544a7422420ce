-- Agent edits: workspace/applyEdit applied to Neovim buffers (undoable), and
-- the buffers written to disk (agent/saveDocuments, `save_agent_edits`).
--
-- A buffer that held unsaved changes of the user's when the edit landed is not
-- written: writing it would save the user's unfinished work with the agent's
-- change. It stays modified (the tool card says so) until the user writes it.
-- An edit that waits for the user's review (the server's applyEdit says
-- `agentLsp.review = "review"`, however the setting was made) is not written
-- either: the server asks for the save once its hunks are kept or undone.
local M = {}

---@type table<integer, true> buffers left unsaved because they had the user's changes
M.held = {}

local function hold(buf)
  if M.held[buf] then
    return
  end
  M.held[buf] = true
  vim.api.nvim_create_autocmd({ "BufWritePost", "BufUnload" }, {
    buffer = buf,
    once = true,
    callback = function()
      M.held[buf] = nil
    end,
  })
end

--- Whether the agent's edit of `path` was left unsaved because the buffer had the user's changes.
function M.left_unsaved(path)
  local buf = type(path) == "string" and vim.fn.bufnr(path) or -1
  return buf ~= -1 and M.held[buf] == true
end

local config = require("agent_lsp.config")
local util = vim.lsp.util

-- Every document an edit touches: {uri, kind = "text" | "create" | "rename" | "delete", version?}.
local function touched(edit)
  local out = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind == "create" then
      out[#out + 1] = { uri = change.uri, kind = "create" }
    elseif change.kind == "rename" then
      out[#out + 1] = { uri = change.newUri, kind = "rename" }
    elseif change.kind == "delete" then
      out[#out + 1] = { uri = change.uri, kind = "delete" }
    elseif change.textDocument then
      out[#out + 1] = { uri = change.textDocument.uri, kind = "text", version = change.textDocument.version }
    end
  end
  for uri in pairs(edit.changes or {}) do
    out[#out + 1] = { uri = uri, kind = "text" }
  end
  return out
end

local function loaded_buffer(uri)
  local buf = vim.fn.bufnr(vim.uri_to_fname(uri))
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    return buf
  end
end

--- Write a buffer to disk (creating folders); quiet, keeps the alternate file.
function M.write_buffer(buf)
  if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return false
  end
  if not vim.bo[buf].modified and vim.uv.fs_stat(name) then
    return true
  end
  vim.fn.mkdir(vim.fs.dirname(name), "p")
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd("silent keepalt write!")
  end)
  if not ok then
    vim.notify(("agent_lsp: could not write %s: %s"):format(name, err), vim.log.levels.ERROR)
  end
  return ok
end

-- A buffer the edit had to load (the file was not open) is written and
-- unloaded again: to the user it is a file the agent changed on disk.
local function settle(buf, was_loaded, was_modified, review)
  if review == "review" then
    return -- the edit waits for the user's review (agent_lsp.review); saved once kept or undone
  end
  if was_loaded then
    if was_modified then
      hold(buf)
    elseif config.options.save_agent_edits and not M.held[buf] then
      M.write_buffer(buf)
    end
    return
  end
  if M.write_buffer(buf) and #vim.fn.win_findbuf(buf) == 0 then
    pcall(vim.api.nvim_buf_delete, buf, { force = false })
  end
end

--- Handler of workspace/applyEdit -> {applied, failureReason?}.
function M.handle_apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local edit = params and params.edit
  if not client or type(edit) ~= "table" then
    return { applied = false, failureReason = "no edit" }
  end
  local docs = touched(edit)
  -- Neovim skips a stale versioned edit silently; refuse it so the agent re-reads.
  for _, doc in ipairs(docs) do
    local buf = doc.kind == "text" and type(doc.version) == "number" and loaded_buffer(doc.uri)
    local current = buf and vim.lsp.buf_is_attached(buf, client.id) and util.buf_versions[buf]
    if type(current) == "number" and current ~= doc.version then
      return {
        applied = false,
        failureReason = ("%s changed in the editor (version %d, the edit was for %d)"):format(
          vim.uri_to_fname(doc.uri),
          current,
          doc.version
        ),
      }
    end
  end
  local was_loaded, was_modified = {}, {}
  for _, doc in ipairs(docs) do
    local buf = loaded_buffer(doc.uri)
    was_loaded[doc.uri] = buf ~= nil
    was_modified[doc.uri] = buf ~= nil and vim.bo[buf].modified
  end
  local ok, err = pcall(util.apply_workspace_edit, edit, client.offset_encoding)
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  -- the server says whether the edit waits for review, however edits.review was set
  local review = type(params.agentLsp) == "table" and params.agentLsp.review or "apply"
  for _, doc in ipairs(docs) do
    if doc.kind ~= "delete" then
      local buf = loaded_buffer(doc.uri)
      if buf then
        settle(buf, was_loaded[doc.uri], was_modified[doc.uri], review)
      end
    end
  end
  return { applied = true }
end

--- Handler of agent/saveDocuments {uris} -> {unsaved?}: `unsaved` names the
--- buffers left unsaved because they hold the user's changes (the model is told).
function M.handle_save_documents(_, params, _)
  local unsaved = {}
  if config.options.save_agent_edits then
    for _, uri in ipairs((params or {}).uris or {}) do
      local buf = loaded_buffer(uri)
      if buf and M.held[buf] then
        unsaved[#unsaved + 1] = uri
      elseif buf then
        M.write_buffer(buf)
      end
    end
  end
  return #unsaved > 0 and { unsaved = unsaved } or vim.empty_dict()
end

return M
