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
    # a symbol's code: its deeper-indented lines and the line that closes it
    ends = editor.lua("local m = require('agent_lsp.mentions') return { "
                      "m.block_end({'function f() {', '  x();', '', '}', 'next'}), "
                      "m.block_end({'local function g()', '  return 1', 'end', 'x = 1'}), "
                      "m.block_end({'VALUE = 3', '', 'other = 4'}) }")
    assert ends == [4, 3, 1]


def test_hash_symbol_attaches_the_code_the_buffers_language_server_finds(editor: Editor) -> None:
    import shutil
    import sys
    from pathlib import Path

    import pytest

    from nvim_harness import START_PYRIGHT

    server = shutil.which("basedpyright-langserver") or str(Path(sys.executable).parent / "basedpyright-langserver")
    if not Path(server).exists():
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    (editor.workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\nVALUE = 3\n")
    editor.lua(START_PYRIGHT, server)
    editor.setup([{"text": "Seen it."}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.wait("#vim.lsp.get_clients({ bufnr = 0, name = 'basedpyright' }) > 0 and "
                "vim.lsp.get_clients({ bufnr = 0, name = 'basedpyright' })[1].initialized", 40000, "basedpyright")
    # its index of the workspace takes a moment: ask until it finds the symbol
    editor.wait("#require('agent_lsp.mentions').symbols(0, 'add', 3000) > 0", 40000, "the symbol to be found")
    editor.cmd("AgentAsk why does #symbol:add take two arguments?")
    editor.wait_idle()
    [context] = user_message(editor)["context"]
    assert context["kind"] == "selection" and context["uri"].endswith("/calc.py")
    assert context["text"] == "def add(a, b):\n    return a + b"
    assert "calc.py, lines 1–2" in sent_to_model(editor)
