"""Reviewing the agent's edits in Neovim, against the real server (edits.review =
"review"): the edit lands in the buffer unsaved, each hunk is a sign, `]h`
moves to the next one, `<leader>au` undoes the one under the cursor and
`<leader>ak` keeps it, :AgentReview lists them in the quickfix list; the file is
written once no hunk of it is pending."""

from __future__ import annotations

from conftest import SERVER_CMD, Editor

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

    press(editor, "[h")
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 1
    press(editor, "<leader>ak")
    editor.wait("#require('agent_lsp.review').positions(vim.api.nvim_get_current_buf()) == 0", what="no sign")
    editor.wait(f"vim.fn.readfile({str(editor.workspace / 'a.py')!r})[1] == 'x = 2'", what="the write")
    assert (editor.workspace / "a.py").read_text() == "x = 2\nprint(x)\n"
    assert signs(editor) == []
    assert editor.errors() == []
