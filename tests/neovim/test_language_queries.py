"""The agent asks the language server Neovim runs for the buffer (a real
basedpyright attached with vim.lsp.start, not agent_lsp itself): an edit's
result names the error it added, as the user's server reports it on the
buffer, and a rename computed by that server lands in every file as one edit.
The server's own language servers are off here, so only Neovim's can answer."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from nvim_harness import SERVER_CMD, START_PYRIGHT, Editor

BASEDPYRIGHT = shutil.which("basedpyright-langserver") or str(Path(sys.executable).parent / "basedpyright-langserver")

pytestmark = pytest.mark.slow

BREAK = {"name": "edit_file", "arguments": {"path": "greet.py", "edits": [
    {"oldText": 'return "hi " + name', "newText": 'return "hi " + nme'}]}}
RENAME = {"name": "language", "arguments": {"operation": "rename", "path": "greet.py", "line": 1,
                                             "symbol": "greet", "newName": "welcome"}}



def tool_results(editor: Editor) -> list[str]:
    return editor.lua("""
        local out = {}
        for _, e in ipairs(T.session().events) do
          if e.type == 'tool/result' then
            local text = {}
            for _, b in ipairs(e.data.message.content) do text[#text + 1] = b.text or '' end
            out[#out + 1] = table.concat(text)
          end
        end
        return out""")


def test_the_agent_asks_neovims_own_language_server(editor: Editor, workspace: Path) -> None:
    if not Path(BASEDPYRIGHT).exists():
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    (workspace / "greet.py").write_text('def greet(name: str) -> str:\n    return "hi " + name\n')
    (workspace / "main.py").write_text('from greet import greet\n\nprint(greet("bob"))\n')
    editor.lua(START_PYRIGHT, BASEDPYRIGHT)
    script = [{"when": "break it", "tools": [BREAK]}, {"when": "break it", "text": "Broken."},
              {"when": "rename it", "tools": [RENAME]}, {"when": "rename it", "text": "Renamed."}]
    editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": {
        "model": {"provider": "scripted", "script": script},
        "language": {"enabled": True, "discovery": False, "waitSeconds": 15}}})
    editor.edit("greet.py")
    editor.wait_attached()
    editor.wait("#vim.lsp.get_clients({ bufnr = 0, name = 'basedpyright' }) == 1", 30000, "basedpyright to attach")

    editor.cmd("AgentAsk break it")
    editor.wait_idle(60000)
    (broken,) = tool_results(editor)
    assert "Problems after this change (basedpyright): 1 new error" in broken, broken
    assert 'greet.py:2:20: error: "nme" is not defined' in broken

    editor.cmd("AgentAsk rename it")
    editor.wait("#vim.tbl_filter(function(l) return l:find('Renamed.', 1, true) end, T.chat_lines()) > 0", 60000,
                "the rename turn")
    renamed = tool_results(editor)[-1]
    assert "Applied rename to welcome" in renamed and "in 2 files" in renamed, renamed
    editor.wait("vim.fn.readfile('main.py')[1] == 'from greet import welcome'", 10000, "main.py written")
    assert (workspace / "greet.py").read_text().startswith("def welcome(")

    editor.edit("greet.py")
    editor.cmd("checkhealth agent_lsp")
    report = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "language queries: answered by basedpyright (diagnostics: basedpyright)" in report, report
