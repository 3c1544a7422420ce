"""Edit -> tool result with fresh diagnostics, through the editor. Prints figures; asserts nothing.

    .venv/bin/python bench/language_editor.py [--edits 12]

A real headless Neovim with the plugin and the real server, the scripted
model making --edits edits that alternately break and fix a call (basedpyright
sees the break in two other files). The figure is the edit_file call as the
session log timed it (tool/call -> tool/result: the edit applied in the
buffer, the problems asked for and compared), in three set-ups in one run:

- the editor's own server: basedpyright attached to the buffers in Neovim, the
  agent's own servers off, so the agent asks Neovim (agent/languageQuery);
- the agent's own servers: nothing attached in Neovim, so the agent runs
  basedpyright and ruff itself;
- no language servers (the reference).

VS Code's figure comes from its own benchmark in the real extension host
(editors/vscode/exttest/languageBench.ts, `EXT_BENCH=1 node
scripts/vscode_run.mjs exttest`), since code-server is driven from Node.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "neovim"))
sys.path.insert(0, str(ROOT / "bench"))
from language_tools import percentile, project  # noqa: E402
from nvim_harness import SERVER_CMD, START_PYRIGHT, start_editor, stop_editor  # noqa: E402

BASEDPYRIGHT = str(Path(sys.executable).parent / "basedpyright-langserver")
SWAPS = [("def total(values: list[int]) -> int:", "def total(values: list[int], start: int) -> int:"),
         ("def total(values: list[int], start: int) -> int:", "def total(values: list[int]) -> int:")]
TIMES = """
local out, started = {}, {}
for _, e in ipairs(T.session().events) do
  if e.type == 'tool/call' then started[e.data.callId] = e.time end
  if e.type == 'tool/result' and e.data.name == 'edit_file' then
    local text = ''
    for _, b in ipairs(e.data.message.content) do text = text .. (b.text or '') end
    out[#out + 1] = { e.time - started[e.data.callId], text }
  end
end
return out
"""


def run(base: Path, label: str, edits: int, language: dict, attach: bool) -> list[float]:
    workspace = project(base / label)
    (workspace / ".git").mkdir()
    monkeypatch = pytest.MonkeyPatch()
    editor = start_editor(workspace, base / f"{label}-home", monkeypatch)
    try:
        if attach:
            editor.lua(START_PYRIGHT, BASEDPYRIGHT)
        script = []
        for i in range(edits):
            old, new = SWAPS[i % 2]
            edit = {"name": "edit_file", "arguments": {"path": "pkg/core.py", "edits": [{"oldText": old, "newText": new}]}}
            script += [{"when": f"edit {i}", "tools": [edit]}, {"when": f"edit {i}", "text": f"done {i}"}]
        editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": {
            "model": {"provider": "scripted", "script": script}, "language": language}})
        editor.edit("pkg/core.py")
        editor.wait_attached()
        if attach:
            editor.wait("#vim.lsp.get_clients({ bufnr = 0, name = 'basedpyright' }) == 1", 30000, "basedpyright")
        for i in range(edits):
            editor.cmd(f"AgentAsk edit {i}")
            editor.wait(f"#vim.tbl_filter(function(l) return l:find('done {i}', 1, true) end, T.chat_lines()) > 0",
                        60000, f"edit {i}")
        results = editor.lua(TIMES)
    finally:
        stop_editor(editor)
        monkeypatch.undo()
    unknown = sum("unknown" in text for _, text in results)
    if unknown:
        print(f"   ({label}: {unknown} of {len(results)} results said the problems were unknown)")
    return [ms for ms, _ in results[1:]]  # the first edit pays the servers' start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=12)
    options = parser.parse_args()
    if not Path(BASEDPYRIGHT).exists():
        print("basedpyright is not installed (pip install '.[language]'); nothing measured")
        return
    print(f"edit -> tool result in headless Neovim, {options.edits} edits (the first, which starts servers, left out)")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        rows = [
            ("the editor's basedpyright (relay)", run(base, "relay", options.edits,
                                                       {"enabled": True, "discovery": False, "waitSeconds": 5}, True)),
            ("the agent's own servers", run(base, "own", options.edits, {"enabled": True, "waitSeconds": 5}, False)),
            ("no language servers (ref.)", run(base, "none", options.edits, {"enabled": False}, False)),
        ]
    for label, values in rows:
        if values:
            print(f"   {label:36} median {statistics.median(values):6.0f} ms   p95 {percentile(values, 0.95):6.0f} ms")


if __name__ == "__main__":
    main()
