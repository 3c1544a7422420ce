"""The edit tools report the problems their edit added, and the language tool
answers from a real language server (basedpyright, installed with the test
extras), over the workspace's own server pool."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tool_fakes import BufferEditor, Ctx

from agent_lsp.config import LanguageSettings
from agent_lsp.language import document_reader, workspace_language
from agent_lsp.tools import build_tools

pytestmark = pytest.mark.slow

# Generous for a loaded CI machine: the first check of a cold server takes seconds.
SETTINGS = LanguageSettings(wait_seconds=20)
PYRIGHT_ONLY = {"ruff": {"enabled": False}, "pyright": {"enabled": False}}


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "greet.py").write_text(
        'def greet(name: str) -> str:\n    return "hi " + name\n\n\nbroken: int = "not a number"\n')
    (root / "pkg" / "main.py").write_text("from pkg.greet import greet\n\nprint(greet(\"bob\"))\n")
    (root / "pkg" / "other.py").write_text("from pkg.greet import greet\n\nGREETING = greet(\"ann\")\n")
    return root


@pytest.fixture
async def tools(tmp_path: Path):
    root = _project(tmp_path / "ws")
    editor = BufferEditor([root])
    language = workspace_language(root, SETTINGS, PYRIGHT_ONLY, document_reader(editor))
    assert language is not None, "basedpyright is installed with the test extras"
    by_name = {t.name: t for t in build_tools(editor, [root], language=language)}
    yield root, editor, by_name
    await language.close()


async def _run(tool, **args):
    return await tool.run(tool.input_model.model_validate(args), Ctx(name=tool.name))


async def test_an_edit_that_adds_an_undefined_name_reports_it_and_not_the_older_problem(tools):
    root, _, t = tools
    await _run(t["read_file"], path="pkg/greet.py")
    out = await _run(t["edit_file"], path="pkg/greet.py", edits=[
        {"oldText": 'return "hi " + name', "newText": 'return "hi " + nme'}])
    assert not out.is_error, out.content
    assert "1 new error" in out.content, out.content
    assert 'pkg/greet.py:2:' in out.content and '"nme" is not defined' in out.content
    assert "not a number" not in out.content.split("Problems after")[1]  # the older problem is not called new
    assert "1 existing one in this file is not from this change" in out.content
    assert out.meta["problems"]["added"][0]["line"] == 1

    fixed = await _run(t["edit_file"], path="pkg/greet.py", edits=[
        {"oldText": 'return "hi " + nme', "newText": 'return "hi " + name'}])
    assert "No new problems" in fixed.content and "1 fixed" in fixed.content, fixed.content


async def test_a_changed_signature_reports_the_broken_call_in_another_file(tools):
    root, _, t = tools
    await _run(t["language"], operation="diagnostics")  # the server has checked the workspace
    out = await _run(t["edit_file"], path="pkg/greet.py", edits=[
        {"oldText": "def greet(name: str) -> str:", "newText": "def greet(name: str, times: int) -> str:"}])
    assert "pkg/main.py:3:" in out.content and "pkg/other.py:3:" in out.content, out.content
    assert 'Argument missing for parameter "times"' in out.content


async def test_references_definition_and_hover(tools):
    root, _, t = tools
    refs = await _run(t["language"], operation="references", path="pkg/greet.py", line=1, symbol="greet")
    assert "pkg/main.py:1:" in refs.content and "pkg/other.py:3:" in refs.content, refs.content
    found = await _run(t["language"], operation="definition", path="pkg/main.py", line=3, symbol="greet")
    assert "pkg/greet.py:1:5: def greet(name: str) -> str:" in found.content, found.content
    hover = await _run(t["language"], operation="hover", path="pkg/main.py", line=3, symbol="greet")
    assert "(name: str) -> str" in hover.content, hover.content
    outline = await _run(t["language"], operation="symbols", path="pkg/greet.py")
    assert "greet (function) line 1" in outline.content, outline.content


async def test_rename_changes_every_file_in_one_editor_edit(tools):
    root, editor, t = tools
    out = await _run(t["language"], operation="rename", path="pkg/greet.py", line=1, symbol="greet",
                     newName="welcome")
    assert not out.is_error, out.content
    assert "in 3 files" in out.content and "No new problems" in out.content, out.content
    assert len(editor.applied) == 1, "one workspace edit for the whole rename"
    for name in ("greet.py", "main.py", "other.py"):
        text = (root / "pkg" / name).read_text()
        assert "welcome" in text and "greet(" not in text, text
    assert len(out.meta["journal"]) == 3  # each file's change is journaled for revert


async def test_a_file_no_server_serves_says_so(tools):
    root, _, t = tools
    (root / "notes.xyz").write_text("hello\n")
    out = await _run(t["language"], operation="symbols", path="notes.xyz")
    assert out.is_error and "no language server for .xyz files here" in out.content


async def test_a_server_that_never_answers_does_not_hold_the_edit(tmp_path: Path):
    """A hanging language server: the edit lands and its result says the problems are unknown."""
    root = _project(tmp_path / "ws")
    hang = tmp_path / "hang.sh"
    hang.write_text("#!/bin/sh\nexec sleep 600\n")
    hang.chmod(0o755)
    editor = BufferEditor([root])
    entries = {"basedpyright": {"enabled": False}, "pyright": {"enabled": False}, "ruff": {"enabled": False},
               "hanging": {"command": str(hang), "filetypes": ["py"]}}
    language = workspace_language(root, LanguageSettings(wait_seconds=0.5), entries, document_reader(editor))
    assert language is not None
    edit = {t.name: t for t in build_tools(editor, [root], language=language)}["edit_file"]
    try:
        out = await asyncio.wait_for(_run(edit, path="pkg/greet.py", edits=[
            {"oldText": "broken: int", "newText": "fixed: int"}]), 10)
        assert not out.is_error
        assert "fixed: int" in (root / "pkg" / "greet.py").read_text()
        assert "Problems after this change are unknown" in out.content, out.content
    finally:
        await asyncio.wait_for(language.close(), 10)


async def test_a_read_only_agent_asks_but_does_not_rename(tools):
    from agent_lsp.tools.language import LanguageReader

    root, editor, t = tools
    reader = LanguageReader(t["language"].env)
    refused = await _run(reader, operation="rename", path="pkg/greet.py", line=1, symbol="greet", newName="x")
    assert refused.is_error and "read-only" in refused.content and editor.applied == []
    found = await _run(reader, operation="definition", path="pkg/main.py", line=3, symbol="greet")
    assert "pkg/greet.py:1:5" in found.content


async def test_deleting_a_module_reports_the_imports_it_broke(tools):
    root, _, t = tools
    await _run(t["language"], operation="diagnostics")  # the server has checked the workspace
    out = await _run(t["delete_file"], path="pkg/greet.py")
    assert not out.is_error, out.content
    assert "pkg/main.py:1:" in out.content and "pkg/other.py:1:" in out.content, out.content
    # "Import "pkg.greet" could not be resolved", or, while the package is still cached, ""greet" is unknown import symbol"
    assert out.content.count("greet") >= 3 and "error:" in out.content


async def test_renaming_a_module_keeps_its_old_problems_old_and_reports_the_broken_imports(tools):
    root, _, t = tools
    await _run(t["language"], operation="diagnostics")  # the server has checked the workspace
    out = await _run(t["rename_file"], path="pkg/greet.py", newPath="pkg/hello.py")
    assert not out.is_error, out.content
    assert "pkg/main.py:1:" in out.content and "pkg/other.py:1:" in out.content, out.content
    assert "not a number" not in out.content  # the renamed file's own problem was there before the rename
    assert "1 existing one" in out.content


async def test_a_server_killed_under_the_agent_leaves_the_edit_standing_and_says_so(tools):
    import psutil

    root, _, t = tools
    await _run(t["language"], operation="hover", path="pkg/main.py", line=3, symbol="greet")  # it runs
    for process in psutil.Process().children(recursive=True):
        if "pyright" in " ".join(process.cmdline()):
            process.kill()
    out = await _run(t["edit_file"], path="pkg/greet.py", edits=[{"oldText": "broken: int", "newText": "fixed: int"}])
    assert not out.is_error, out.content
    assert "fixed: int" in (root / "pkg" / "greet.py").read_text()
    assert "Problems after this change are unknown (basedpyright): basedpyright exited" in out.content, out.content
