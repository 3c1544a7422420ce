from pathlib import Path

import pytest
from tool_fakes import BufferEditor, Tools

from agent_lsp.agent.ports import CreateFile, DeleteFile, RenameFile, TextFileEdit
from agent_lsp.workspace.disk_editor import DiskEditor


@pytest.fixture(params=["resource-operations", "no-resource-operations"])
def editor(request, ws: Path) -> BufferEditor:
    return BufferEditor([ws], resource_operations=request.param == "resource-operations")


@pytest.fixture
def tools(ws, editor) -> Tools:
    return Tools(editor, [ws])


async def test_create_file(ws, editor, tools):
    out = await tools("create_file", path="pkg/new.py", content="x = 1\n")
    assert not out.is_error, out.content
    assert (ws / "pkg" / "new.py").read_text() == "x = 1\n"
    if editor.supports_resource_operations:
        (create, insert), label = editor.applied[-1]
        assert create == CreateFile(ws / "pkg" / "new.py") and isinstance(insert, TextFileEdit)
        assert label == "agent: create pkg/new.py"
    else:
        assert editor.applied == []  # the documented fallback: straight to disk
    again = await tools("create_file", path="pkg/new.py")
    assert again.error["code"] == "ALREADY_EXISTS" and (ws / "pkg" / "new.py").read_text() == "x = 1\n"


async def test_create_empty_file(ws, tools):
    out = await tools("create_file", path="empty.txt")
    assert not out.is_error and (ws / "empty.txt").read_text() == ""


async def test_write_file_new_and_existing(ws, editor, tools):
    created = await tools("write_file", path="w.txt", content="one\n")
    assert created.meta["created"] and (ws / "w.txt").read_text() == "one\n"
    editor.open(ws / "w.txt")
    replaced = await tools("write_file", path="w.txt", content="two\nlines\n")
    assert not replaced.is_error, replaced.content
    assert editor.buffers[ws / "w.txt"] == ["two\nlines\n", 2]
    assert (ws / "w.txt").read_text() == "two\nlines\n"  # saved
    same = await tools("write_file", path="w.txt", content="two\nlines\n")
    assert "nothing changed" in same.content
    folder = await tools("write_file", path="src", content="x")
    assert folder.error["code"] == "IS_DIRECTORY"


async def test_write_file_under_a_file_is_refused(ws, tools):
    out = await tools("write_file", path="a.py/inner.py", content="x")
    assert out.error["code"] == "NOT_A_DIRECTORY"


async def test_delete_file(ws, editor, tools):
    out = await tools("delete_file", path="src/util.py")
    assert not out.is_error, out.content
    assert not (ws / "src" / "util.py").exists()
    if editor.supports_resource_operations:
        assert editor.applied[-1][0] == [DeleteFile(ws / "src" / "util.py")]
    missing = await tools("delete_file", path="src/util.py")
    assert missing.error["code"] == "NOT_FOUND"
    folder = await tools("delete_file", path="src")
    assert folder.error["code"] == "IS_DIRECTORY" and (ws / "src").is_dir()


async def test_delete_open_file_without_resource_operations_says_the_buffer_stays(ws):
    editor = BufferEditor([ws], resource_operations=False)
    editor.open(ws / "a.py")
    out = await Tools(editor, [ws])("delete_file", path="a.py")
    assert not (ws / "a.py").exists()
    assert "still has it open" in out.content


async def test_rename_file(ws, editor, tools):
    out = await tools("rename_file", path="src/util.py", newPath="lib/helpers.py")
    assert not out.is_error, out.content
    assert (ws / "lib" / "helpers.py").read_text() == "import os\n\nVALUE = 1\n"
    assert not (ws / "src" / "util.py").exists()
    if editor.supports_resource_operations:
        assert editor.applied[-1][0] == [RenameFile(ws / "src" / "util.py", ws / "lib" / "helpers.py")]
    taken = await tools("rename_file", path="a.py", newPath="lib/helpers.py")
    assert taken.error["code"] == "ALREADY_EXISTS" and (ws / "a.py").exists()
    into = await tools("rename_file", path="lib", newPath="lib/inner")
    assert into.error["code"] == "BAD_TARGET"


async def test_editor_refusal_is_reported(ws):
    class Refusing(DiskEditor):
        async def apply_edit(self, operations, label):
            from agent_lsp.agent.ports import ApplyResult

            return ApplyResult(False, "the user rejected it")

    tools = Tools(Refusing([ws]), [ws])
    out = await tools("create_file", path="n.py")
    assert out.error["code"] == "EDIT_REJECTED" and "the user rejected it" in out.content
    assert not (ws / "n.py").exists()
