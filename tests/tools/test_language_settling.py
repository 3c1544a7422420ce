"""A problem an edit reports as new is new, and "no new problems" means none:
while a real language server (basedpyright) is still checking the workspace,
the result waits for the check to end (bounded) rather than comparing reports
from the middle of it. On a loaded machine pyright's work-done progress
`begin` arrives behind the first reports of the check, and a cold server asks
for its settings after the first file was opened; the relay holds these
messages back as such a machine does, so the test does not depend on the load."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from tool_fakes import BufferEditor, Ctx

from agent_lsp.config import LanguageSettings
from agent_lsp.language import document_reader, workspace_language
from agent_lsp.language.specs import find_command
from agent_lsp.tools import build_tools

pytestmark = pytest.mark.slow

RELAY = Path(__file__).with_name("late_relay.py")
LATE_S = 1.0  # how late the progress reports arrive
# Enough code that checking calc.py takes basedpyright far longer than the quiet
# time after a report (0.15 s), on any machine.
FILLER = "".join(f"def f{i}(x: int) -> list[dict[str, int]]:\n    return [{{str(k): k * x for k in range(x)}} for _ in range({i})]\n\n\n"
                 for i in range(400))


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (root / "helper.py").write_text("def one() -> int:\n    return 1\n")
    (root / "calc.py").write_text("from helper import one\n\n" + FILLER + "def add(a: int, b: int) -> int:\n    return a + b\n\n\n"
                                  "bad: int = 'x'\ncount: int = one()\n")
    (root / "calc.pyi").write_text("def add(a: int, b: int) -> int: ...\n\nbad: int\ncount: int\n")
    (root / "main.py").write_text("from calc import add\n\nprint(add(1, 2))\n")
    return root


async def _run(tool, **args):
    return await tool.run(tool.input_model.model_validate(args), Ctx(name=tool.name))


def _tools(root: Path, *held: str, late_s: float = LATE_S, wait_s: float = 30):
    """The tools over basedpyright, with these messages of it held back `late_s`."""
    server = find_command("basedpyright-langserver")
    assert server is not None, "basedpyright is installed with the test extras"
    relay = [str(RELAY), *(f"{method}={late_s}" for method in held), "--", server, "--stdio"]
    entries = {"ruff": {"enabled": False}, "pyright": {"enabled": False},
               "basedpyright": {"command": sys.executable, "args": relay}}
    editor = BufferEditor([root])
    language = workspace_language(root, LanguageSettings(wait_seconds=wait_s), entries, document_reader(editor))
    assert language is not None
    return language, {tool.name: tool for tool in build_tools(editor, [root], language=language)}


async def test_problems_of_an_edit_are_compared_once_the_check_of_the_text_before_ended(tmp_path: Path):
    root = _project(tmp_path / "ws")
    language, t = _tools(root, "$/progress", "workspace/configuration")
    try:
        # The first edit starts the server. Asked for its settings late, it checks the
        # open stub first and reports calc.py, not checked yet, with no problems; the
        # error found in calc.py a moment later was there before the edit.
        out = await _run(t["edit_file"], path="calc.pyi", edits=[
            {"oldText": "def add(a: int, b: int) -> int: ...", "newText": "def add(a: int, b: int, c: int) -> int: ..."}])
        problems = out.content.split("Problems after this change")[1]
        assert "main.py:3:" in problems and 'Argument missing for parameter "c"' in problems, out.content
        assert "calc.py" not in problems and "not known" not in problems, out.content

        # A change that breaks calc.py, whose check takes a while: its new error is in
        # this result, not "No new problems" from before that check ended.
        out = await _run(t["edit_file"], path="helper.py", edits=[
            {"oldText": "def one() -> int:\n    return 1", "newText": "def one() -> str:\n    return \"1\""}])
        assert not out.is_error, out.content
        assert "calc.py:" in out.content and 'is not assignable to declared type "int"' in out.content, out.content
    finally:
        await language.close()


async def test_a_check_not_ended_within_the_bound_is_said_to_be_incomplete(tmp_path: Path):
    """The check an edit started is still under way when language.waitSeconds
    ends: the result does not read "No new problems", it says the check was
    not complete."""
    root = _project(tmp_path / "ws")
    language, t = _tools(root, "$/progress", late_s=4.0, wait_s=1.5)
    try:
        for _ in range(100):  # the server's first check of the workspace has ended
            seen = (await _run(t["language"], operation="diagnostics")).content
            if "calc.py" in seen:
                break
        await asyncio.sleep(4.5)
        out = await _run(t["edit_file"], path="helper.py", edits=[{"oldText": "return 1", "newText": "return 2"}])
        assert not out.is_error, out.content
        assert "Not complete: basedpyright had not finished checking the workspace within 1.5 s" in out.content, out.content
        assert "No new problems (basedpyright)." not in out.content, out.content
    finally:
        await language.close()
