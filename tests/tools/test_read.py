import json

from agent_lsp.agent import ToolRegistry
from agent_lsp.tools import read as read_module


async def test_read_numbers_lines(disk_tools):
    out = await disk_tools("read_file", path="a.py")
    assert not out.is_error
    assert out.content.splitlines()[:2] == ["1\tdef add(a, b):", "2\t    return a - b"]
    assert out.meta["totalLines"] == 5 and out.meta["fromBuffer"] is False


async def test_read_shows_the_open_buffer_not_disk(ws, buffer_editor, buffer_tools):
    buffer_editor.open(ws / "a.py", "unsaved text\n")
    out = await buffer_tools("read_file", path="a.py")
    assert out.content == "1\tunsaved text"
    assert out.meta["fromBuffer"] is True


async def test_read_line_range(ws, disk_tools):
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    out = await disk_tools("read_file", path="long.txt", startLine=10, endLine=12)
    assert out.content.splitlines() == ["10\tline 10", "11\tline 11", "12\tline 12", "[lines 10-12 of 30]"]


async def test_read_cut_at_the_cap_says_what_to_ask_next(ws, disk_tools, monkeypatch):
    monkeypatch.setattr(read_module, "MAX_LINES", 5)
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    out = await disk_tools("read_file", path="long.txt")
    assert out.content.splitlines()[-1] == "[truncated: showed lines 1-5 of 30; ask for lines 6-10 with startLine/endLine]"


async def test_read_refuses_binary(ws, disk_tools):
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    out = await disk_tools("read_file", path="img.png")
    assert out.is_error and out.error["code"] == "BINARY_FILE"
    assert "binary" in out.content


async def test_read_non_utf8_is_replaced_and_said(ws, disk_tools):
    (ws / "latin.txt").write_bytes("café\n".encode("latin-1"))
    out = await disk_tools("read_file", path="latin.txt")
    assert not out.is_error
    assert "caf\ufffd" in out.content and "not valid UTF-8" in out.content


async def test_read_errors_name_the_problem(ws, disk_tools):
    missing = await disk_tools("read_file", path="nope.py")
    assert missing.is_error and "'nope.py' does not exist" in missing.content
    folder = await disk_tools("read_file", path="src")
    assert folder.error["code"] == "IS_DIRECTORY" and "list_dir" in folder.content
    past = await disk_tools("read_file", path="a.py", startLine=50)
    assert past.error["code"] == "BAD_RANGE" and "5 lines" in past.content


async def test_read_empty_file(ws, disk_tools):
    (ws / "empty.txt").write_text("")
    out = await disk_tools("read_file", path="empty.txt")
    assert out.content == "empty.txt is empty."


def test_reads_are_parallel_writes_are_not(disk_tools):
    kinds = {name: tool.is_parallel(None) for name, tool in disk_tools.by_name.items()}
    assert kinds == {
        "read_file": True, "list_dir": True, "glob": True, "grep": True,
        "edit_file": False, "write_file": False, "create_file": False, "delete_file": False,
        "rename_file": False, "run_command": False,
    }  # fmt: skip


def test_the_model_reads_lean_camel_case_schemas(disk_tools):
    """What the model is sent: camelCase names, one description per field that needs
    one, nested models written in place, and nothing that repeats a name (titles)."""
    specs = {s["name"]: s for s in ToolRegistry(disk_tools.by_name.values()).specs()}
    read = specs["read_file"]["parameters"]
    assert set(read["properties"]) == {"path", "startLine", "endLine"}
    assert read["properties"]["startLine"] == {"type": "integer", "minimum": 1, "description": "first line to read"}
    edit = specs["edit_file"]["parameters"]
    assert set(edit["properties"]["edits"]["items"]["properties"]) == {"oldText", "newText", "replaceAll"}
    text = json.dumps(list(specs.values()))
    assert '"title"' not in text and "$defs" not in text and "$ref" not in text and "additionalProperties" not in text
