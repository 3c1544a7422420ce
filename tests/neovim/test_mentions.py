"""Mentions in a message, against the real server: `@path` attaches that file
of the workspace and `#buffer` the buffer the user asked from (its unsaved
changes included), each as a file context item the model reads as code;
a word after @ that names no file stays text. In the input window,
<C-x><C-o> after @ or # completes them."""

from __future__ import annotations

from nvim_harness import Editor
from test_commands import user_message


def sent_to_model(editor: Editor) -> str:
    """What the model read of the first user message (its text blocks)."""
    return editor.lua(
        "local m = vim.tbl_filter(function(e) return e.type == 'user/message' end, T.session().events)[1].data.message "
        "return table.concat(vim.tbl_map(function(b) return b.text or '' end, m.content), '\\n')"
    )


def test_at_file_and_hash_buffer_attach_the_files(editor: Editor) -> None:
    (editor.workspace / "lib").mkdir()
    (editor.workspace / "lib" / "util.py").write_text("def helper():\n    return 42\n")
    editor.setup([{"text": "Seen both."}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, {'x = 2  # unsaved'})")
    editor.cmd("AgentAsk compare @lib/util.py with #buffer, and ask @nobody.")
    editor.wait_idle()
    message = user_message(editor)
    assert [(c["kind"], c["uri"].rsplit("/", 1)[-1]) for c in message["context"]] == [("file", "util.py"), ("file", "a.py")]
    util, buffer = message["context"]
    assert util["text"] == "def helper():\n    return 42\n"
    assert buffer["text"] == "x = 2  # unsaved\nprint(x)"  # the buffer, not the file on disk
    seen = sent_to_model(editor)
    assert "compare @lib/util.py with #buffer, and ask @nobody." in seen
    assert "lib/util.py, as the user's editor has it:\n```\ndef helper():\n    return 42\n```" in seen, seen
    assert '"kind"' not in seen  # code, not a JSON object
    assert "> context: file lib/util.py" in editor.chat_lines()


def test_the_input_window_completes_mentions(editor: Editor) -> None:
    (editor.workspace / "lib").mkdir()
    (editor.workspace / "lib" / "util.py").write_text("x = 1\n")
    editor.setup([])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk")  # the input window, in Insert mode
    editor.lua("vim.cmd('stopinsert') vim.api.nvim_feedkeys('ilook at @util' .. vim.keycode('<C-x><C-o><Esc>'), 'xt', false)")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "look at @lib/util.py"
    hashes = editor.lua("return vim.tbl_map(function(i) return i.word end, require('agent_lsp.mentions').omnifunc(0, '#buf'))")
    assert hashes == ["#buffer", "#buffers"]
