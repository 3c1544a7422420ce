"""Permission questions in the chat and the rules view, in a real headless
Neovim against the real server: the question waits below the transcript with
a key per answer the server honours, the statusline says the agent waits for
the user, and :AgentPermissions lists remembered rules and revokes one."""

from __future__ import annotations

from nvim_harness import Editor

CARD = r"""
local ns = vim.api.nvim_get_namespaces()["agent_lsp.permission"]
local out = {}
if not ns or not T.chat_buf() then return out end
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(T.chat_buf(), ns, 0, -1, { details = true })) do
  for _, line in ipairs(mark[4].virt_lines or {}) do
    local text = {}
    for _, chunk in ipairs(line) do text[#text + 1] = chunk[1] end
    out[#out + 1] = table.concat(text)
  end
end
return out
"""

WAITING = "T.session() ~= nil and require('agent_lsp.permissions').is_waiting(T.session())"


def command(text: str) -> dict:
    return {"tools": [{"name": "run_command", "arguments": {"command": text}}]}


def test_the_question_waits_in_the_chat_and_a_key_answers_it(editor: Editor) -> None:
    editor.setup([command("echo inline-ok"), {"text": "ran it"}, command("rm -rf build"), {"text": "told no"}])
    editor.edit("a.py")
    editor.wait_attached()
    code_win = editor.lua("return vim.api.nvim_get_current_win()")
    editor.cmd("AgentAsk run echo")
    editor.wait(WAITING, what="the question")
    card = editor.lua(CARD)
    assert card[0] == "▌ agent_lsp is waiting for you"
    assert any("echo inline-ok" in line for line in card)
    assert card[-1] == "▌ [a] Allow once  [s] Allow for this session  [A] Always allow  [d] Deny "
    # Nothing blocks: the user's window keeps the focus, and every status says who waits.
    assert editor.lua("return vim.api.nvim_get_current_win()") == code_win
    assert editor.lua("return require('agent_lsp').status()") == "agent waiting for you"
    chat_win = editor.lua("return vim.fn.win_findbuf(T.chat_buf())[1]")
    winbar = editor.lua(f"return vim.api.nvim_win_call({chat_win}, function() "
                        f"vim.g.statusline_winid = {chat_win} return require('agent_lsp.chat').winbar() end)")
    assert "waiting for you" in winbar

    editor.wait("require('agent_lsp.permissions').accepts_keys(T.client().id)", what="the keys to act")
    editor.lua(f"vim.api.nvim_set_current_win({chat_win}) vim.api.nvim_feedkeys('a', 'mx', false)")
    editor.wait_idle()
    assert "▸ ✓ run_command echo inline-ok · exit 0" in editor.chat_lines()
    assert editor.lua(CARD) == []
    assert editor.lua("return require('agent_lsp').status()") == "agent idle"

    # A command the server always confirms offers only once and deny, and says why.
    editor.cmd("AgentAsk clean up")
    editor.wait(WAITING, what="the second question")
    card = editor.lua(CARD)
    assert any("Always confirmed" in line and "recursive delete" in line for line in card)
    assert card[-1] == "▌ [a] Allow once  [d] Deny "
    editor.cmd("AgentPermission deny")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the second turn")
    assert "▸ ✗ run_command rm -rf build · denied" in editor.chat_lines()
    assert editor.errors() == []


def test_agent_permissions_lists_remembered_rules_and_dd_revokes_one(editor: Editor) -> None:
    script = [command("echo kept"), {"text": "1"}, command("echo kept"), {"text": "2"}]
    deny_secrets = {"rules": [{"tool": "read_file", "action": "deny", "pathGlob": "secrets/**"}]}
    editor.setup(settings={"model": {"provider": "scripted", "script": script}, "permissions": deny_secrets})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk run it")
    editor.wait(WAITING, what="the question")
    editor.cmd("AgentPermission always")
    editor.wait_idle()

    editor.cmd("AgentPermissions")
    editor.wait("vim.api.nvim_buf_line_count(0) == 3", what="the rules")
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert lines[0].startswith("Permission rules of ")
    settings_line, remembered = sorted(lines[1:], key=lambda l: "workspace" in l)
    assert settings_line.startswith("· settings  deny  read_file") and "secrets/**" in settings_line
    assert remembered.startswith("  workspace allow run_command") and "$ echo kept" in remembered
    assert remembered.endswith("permissions.json")

    row = lines.index(settings_line) + 1
    editor.lua(f"vim.api.nvim_win_set_cursor(0, {{{row}, 0}}) vim.api.nvim_feedkeys('dd', 'mx', false)")
    assert any("comes from the permissions.rules setting: change it there" in n["msg"]
               for n in editor.lua("return _G.test_notes"))
    row = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)").index(remembered) + 1
    editor.lua(f"vim.api.nvim_win_set_cursor(0, {{{row}, 0}}) vim.api.nvim_feedkeys('dd', 'mx', false)")
    editor.wait("vim.api.nvim_buf_line_count(0) == 2", what="the revoke")
    assert "settings" in editor.lua("return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1]")

    editor.cmd("close")
    editor.cmd("AgentAsk run it again")
    editor.wait(WAITING, what="the question, asked again")
    editor.cmd("AgentPermission once")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the second turn")
    assert editor.errors() == []
