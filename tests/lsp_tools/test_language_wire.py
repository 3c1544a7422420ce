"""The agent sees what a real language server says, through the real server:
an edit's result carries the problems it added (what the model reads at its next
step), a rename reaches the editor as one workspace edit, and the language
servers we start end with our server, even when it is killed."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import psutil
import pytest

from agent_lsp.sandbox import sandbox_availability
from tools_harness import call, is_error, run_turn, text_of, tool_server, wait_until

pytestmark = pytest.mark.slow

LANGUAGE = {"language": {"enabled": True, "waitSeconds": 20},
            "languageServers": {"ruff": {"enabled": False}}}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "greet.py").write_text(
        'def greet(name: str) -> str:\n    return "hi " + name\n\n\nbroken: int = "not a number"\n')
    (root / "pkg" / "main.py").write_text('from pkg.greet import greet\n\nprint(greet("bob"))\n')
    (root / "pkg" / "other.py").write_text('from pkg.greet import greet\n\nGREETING = greet("ann")\n')
    return root.resolve()


async def test_the_model_reads_the_error_its_edit_made_and_a_rename_is_one_edit(tmp_path: Path):
    root = _project(tmp_path)
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions", settings=LANGUAGE) as editor:
        editor.open(root / "pkg" / "main.py")  # an unsaved buffer is what the server checks
        editor.type(root / "pkg" / "main.py", 'from pkg.greet import greet\n\nprint(greet("bob"))\nprint(greet("eve"))\n')
        _, results = await run_turn(editor, [
            call("read_file", path="pkg/greet.py"),
            call("edit_file", path="pkg/greet.py", edits=[{"oldText": "def greet(name: str) -> str:",
                                                           "newText": "def greet(name: str, times: int) -> str:"}]),
            {"text": "done"},
        ])
        edited = text_of(results[1])
        assert "3 new errors" in edited, edited
        assert "pkg/main.py:4:" in edited, "the open buffer's unsaved line is checked"
        assert "pkg/other.py:3:" in edited and 'Argument missing for parameter "times"' in edited
        assert "1 existing one in this file is not from this change" in edited

        edits_before = len(editor.applied_edits)
        _, results = await run_turn(editor, [
            call("language", operation="rename", path="pkg/greet.py", line=1, symbol="greet", newName="welcome"),
            {"text": "done"},
        ])
        assert not is_error(results[0]), text_of(results[0])
        (rename,) = editor.applied_edits[edits_before:]
        changed = {Path(c.text_document.uri).name for c in rename.edit.document_changes}
        assert changed == {"greet.py", "main.py", "other.py"}
        assert "welcome" in editor.text(root / "pkg" / "main.py")  # the open buffer got it
        assert "def welcome(" in (root / "pkg" / "greet.py").read_text()


async def test_killing_the_server_leaves_no_language_server_behind(tmp_path: Path):
    root = _project(tmp_path)
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions", settings=LANGUAGE,
                           graceful=False) as editor:
        _, results = await run_turn(editor, [
            call("language", operation="diagnostics", path="pkg/greet.py"), {"text": "done"}])
        assert "not a number" in text_of(results[0]), text_of(results[0])
        status = await editor.request("agent/language/status", {})
        by_name = {s["name"]: s for s in status["servers"]}
        assert by_name["basedpyright"]["state"] == "running" and by_name["basedpyright"]["source"] == "built-in"
        assert "ruff" not in by_name  # turned off in the settings
        assert by_name["gopls"]["state"] in ("not-found", "found") and by_name["gopls"]["reason"]
        assert status["editorFirst"] is False  # this test editor does not relay its own servers
        works = sandbox_availability().works  # the commands' sandbox, which the language servers run in too
        assert by_name["basedpyright"]["sandbox"] == "sandboxed, no network" if works else \
            by_name["basedpyright"]["sandbox"].startswith("not sandboxed: ")
        server = psutil.Process(editor.server_pid)
        children = [p for p in server.children(recursive=True) if "pyright" in " ".join(p.cmdline())]
        assert children, "the language server runs as our child"
        os.kill(editor.server_pid, signal.SIGKILL)
        await asyncio.to_thread(server.wait, 10)
    for child in children:
        await wait_until(lambda: not _alive(child), timeout=10, what=f"language server {child.pid} to end")


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
