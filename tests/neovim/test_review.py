"""Reviewing the agent's edits in Neovim, against the real server (edits.review =
"review"): the edit lands in the buffer unsaved, each hunk is a sign, `]h`
moves to the next one, `<leader>au` undoes the one under the cursor and
`<leader>ak` keeps it, :AgentReview lists them in the quickfix list; the file is
written once no hunk of it is pending. Review mode set only in the user's
config.toml leaves the buffer unsaved just the same (the server says so with the
edit). After the server dies, the signs go; the next server (:AgentReview starts
it) shows them again and keeps and undoes them."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil

from nvim_harness import SERVER_CMD, Editor

EDIT = {"name": "edit_file", "id": "e1", "arguments": {"path": "a.py", "edits": [
    {"oldText": "x = 1", "newText": "x = 2"}, {"oldText": "print(x)", "newText": "print(x * 10)"}]}}


def press(editor: Editor, keys: str) -> None:
    editor.lua("vim.api.nvim_feedkeys(vim.keycode(...), 'mx', false)", keys)


def to_file(editor: Editor) -> None:
    """Into a.py's window (the chat or the quickfix list has the focus)."""
    editor.lua("vim.fn.win_gotoid(vim.fn.bufwinid(vim.fn.bufnr('a.py')))")


def signs(editor: Editor) -> list[list]:
    """(row, sign text) of the review signs in the current buffer."""
    return editor.lua("""
        local ns = vim.api.nvim_get_namespaces().agent_lsp_review
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
          out[#out + 1] = { m[2], vim.trim(m[4].sign_text or '') }
        end
        return out""")


def test_hunks_are_signs_kept_and_undone_with_mappings(editor: Editor) -> None:
    script = [{"when": "change it", "tools": [EDIT]}, {"when": "change it", "text": "Changed."}]
    editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": {
        "model": {"provider": "scripted", "script": script}, "edits": {"review": "review"}}})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk change it")
    editor.wait_idle()
    to_file(editor)
    assert editor.lua("return vim.api.nvim_buf_get_name(0)").endswith("a.py")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["x = 2", "print(x * 10)"]
    assert editor.lua("return vim.bo.modified") is True
    assert (editor.workspace / "a.py").read_text() == "x = 1\nprint(x)\n"  # not written
    editor.wait("#require('agent_lsp.review').positions(vim.api.nvim_get_current_buf()) == 2", what="two signs")
    assert signs(editor) == [[0, "▎"], [1, "▎"]]

    editor.cmd("AgentReview")
    editor.wait("#vim.fn.getqflist() == 2", what="the quickfix list")
    assert [item["lnum"] for item in editor.lua("return vim.fn.getqflist()")] == [1, 2]
    editor.cmd("cclose")
    to_file(editor)

    editor.cmd("normal! gg")
    press(editor, "]h")
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 2
    press(editor, "<leader>au")
    editor.wait("vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == 'print(x)'", what="the undo")
    editor.wait("#require('agent_lsp.review').positions(vim.api.nvim_get_current_buf()) == 1", what="one sign")
    assert (editor.workspace / "a.py").read_text() == "x = 1\nprint(x)\n"  # a hunk still pending
    # What the model will be told waits in the inbox; it is not the user's message waiting.
    editor.wait("#T.session().inbox.next_step + #T.session().inbox.next_turn == 1", what="the note for the model")
    assert editor.lua("return require('agent_lsp').status()") == "agent idle"

    press(editor, "[h")
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 1
    press(editor, "<leader>ak")
    editor.wait("#require('agent_lsp.review').positions(vim.api.nvim_get_current_buf()) == 0", what="no sign")
    editor.wait(f"vim.fn.readfile({str(editor.workspace / 'a.py')!r})[1] == 'x = 2'", what="the write")
    assert (editor.workspace / "a.py").read_text() == "x = 2\nprint(x)\n"
    assert signs(editor) == []
    # The next turn tells the model what the user undid; the chat shows a note, not that text.
    editor.cmd("AgentAsk thanks")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the next turn")
    assert "_↶ you undid a change in a.py_" in editor.chat_lines()
    assert "rejected this change" not in editor.chat_text()
    assert editor.errors() == []


def run_edit(editor: Editor, settings: dict) -> None:
    """The scripted model edits both lines of a.py; the cursor ends in a.py."""
    script = [{"when": "change it", "tools": [EDIT]}, {"when": "change it", "text": "Changed."}]
    editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": {
        "model": {"provider": "scripted", "script": script}, **settings}})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk change it")
    editor.wait_idle()
    to_file(editor)


def test_review_mode_from_the_config_file_leaves_the_buffer_unsaved(editor: Editor, tmp_path: Path) -> None:
    config = tmp_path / "home" / "xdg_config_home" / "agent-lsp" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[edits]\nreview = "review"\n')
    run_edit(editor, {})  # nothing about review in the plugin's settings
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["x = 2", "print(x * 10)"]
    editor.wait("#require('agent_lsp.review').positions(vim.api.nvim_get_current_buf()) == 2", what="two signs")
    assert editor.lua("return vim.bo.modified") is True
    assert (editor.workspace / "a.py").read_text() == "x = 1\nprint(x)\n"  # not written
    assert editor.errors() == []


def test_signs_come_back_after_the_server_restarts(editor: Editor, sessions_dir: Path) -> None:
    run_edit(editor, {"edits": {"review": "review"}, "sessionsDir": str(sessions_dir)})
    buf = editor.lua("return vim.api.nvim_get_current_buf()")
    editor.wait(f"#require('agent_lsp.review').positions({buf}) == 2", what="two signs")
    server = psutil.Process(editor.lua("return vim.fn.getpid()")).children(recursive=True)[0]
    os.kill(server.pid, signal.SIGKILL)
    editor.wait("#vim.lsp.get_clients({ name = require('agent_lsp.client').name }) == 0", what="the client to go")
    editor.wait(f"#require('agent_lsp.review').positions({buf}) == 0", what="the signs to go")
    assert editor.lua("return vim.bo.modified") is True  # the unsaved text under review is the buffer's

    editor.cmd("AgentReview")  # starts a server again
    editor.wait(f"#require('agent_lsp.review').positions({buf}) == 2", 40000, what="the signs back")
    assert signs(editor) == [[0, "▎"], [1, "▎"]]
    editor.cmd("cclose")
    to_file(editor)
    editor.cmd("normal! 2G")
    press(editor, "<leader>au")
    editor.wait("vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == 'print(x)'", what="the undo")
    editor.cmd("normal! 1G")
    press(editor, "<leader>ak")
    editor.wait(f"vim.fn.readfile({str(editor.workspace / 'a.py')!r})[1] == 'x = 2'", what="the write")
    assert (editor.workspace / "a.py").read_text() == "x = 2\nprint(x)\n"
    # the file is written before the resolve is answered; the signs go with the refresh after it
    editor.wait(f"#require('agent_lsp.review').positions({buf}) == 0", what="the signs to go")
    assert signs(editor) == []


CARD_CHUNKS = r"""
local ns = vim.api.nvim_get_namespaces()["agent_lsp.permission"]
local out = {}
if not ns or not T.chat_buf() then return out end
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(T.chat_buf(), ns, 0, -1, { details = true })) do
  for _, line in ipairs(mark[4].virt_lines or {}) do
    local text, groups = {}, {}
    for _, chunk in ipairs(line) do text[#text + 1] = chunk[1]; groups[#groups + 1] = chunk[2] end
    out[#out + 1] = { table.concat(text), groups[#groups] }
  end
end
return out
"""

WAITING = "T.session() ~= nil and require('agent_lsp.permissions').is_waiting(T.session())"


def test_ask_mode_shows_the_edit_diff_in_the_chat_question_and_a_split(editor: Editor) -> None:
    script = [{"when": "change it", "tools": [EDIT]}, {"when": "change it", "text": "Changed."},
              {"when": "again", "tools": [{"name": "edit_file", "id": "e2", "arguments": {"path": "a.py", "edits": [
                  {"oldText": "x = 2", "newText": "x = 3"}]}}]}, {"when": "again", "text": "Told no."}]
    editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": {
        "model": {"provider": "scripted", "script": script}, "edits": {"review": "ask"}}})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk change it")
    editor.wait(WAITING, what="the question")
    card = editor.lua(CARD_CHUNKS)
    assert ["-x = 1", "DiffDelete"] in [[text.removeprefix("▌ "), hl] for text, hl in card]
    assert ["+x = 2", "DiffAdd"] in [[text.removeprefix("▌ "), hl] for text, hl in card]
    assert ["+print(x * 10)", "DiffAdd"] in [[text.removeprefix("▌ "), hl] for text, hl in card]
    assert card[-1][0] == "▌ [a] Allow once  [d] Deny  [D] Diff in a split "
    assert editor.lua("return vim.bo.modified") is False  # nothing applied while it waits

    chat_win = editor.lua("return vim.fn.win_findbuf(T.chat_buf())[1]")
    editor.lua(f"vim.api.nvim_set_current_win({chat_win})")
    press(editor, "D")
    split = """(function() for _, w in ipairs(vim.api.nvim_list_wins()) do
      local b = vim.api.nvim_win_get_buf(w)
      if vim.b[b].agent_lsp_permission_diff then return b end end end)()"""
    editor.wait(f"{split} ~= nil", what="the diff split")
    assert editor.lua(f"return vim.bo[{split}].filetype") == "diff"
    lines = editor.lua(f"return vim.api.nvim_buf_get_lines({split}, 0, -1, false)")
    assert "-x = 1" in lines and "+print(x * 10)" in lines

    editor.lua(f"vim.api.nvim_set_current_win({chat_win})")
    editor.wait("require('agent_lsp.permissions').accepts_keys(T.client().id)", what="the keys to act")
    press(editor, "a")
    editor.wait_idle()
    assert editor.lua(f"return {split} == nil")  # the split went with the question
    assert (editor.workspace / "a.py").read_text() == "x = 2\nprint(x * 10)\n"

    editor.cmd("AgentAsk again")
    editor.wait(WAITING, what="the second question")
    editor.cmd("AgentPermission diff")
    editor.wait(f"{split} ~= nil", what="the diff split from the command")
    editor.cmd("AgentPermission deny")
    editor.wait_idle()
    assert editor.lua(f"return {split} == nil")
    assert (editor.workspace / "a.py").read_text() == "x = 2\nprint(x * 10)\n"  # denied: unchanged
    assert editor.errors() == []
