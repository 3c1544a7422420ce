import shlex
import sys

from agent_lsp.agent.ports import TextFileEdit
from tool_fakes import Ctx

PYTHON = shlex.quote(sys.executable)


async def test_edit_on_disk(ws, disk_tools):
    out = await disk_tools(
        "edit_file", path="a.py", edits=[{"oldText": "return a - b", "newText": "return a + b"}]
    )
    assert not out.is_error, out.content
    assert (ws / "a.py").read_text().splitlines()[1] == "    return a + b"
    assert out.content.startswith("Edited a.py: 1 replacement (+1 -1 lines).")
    assert "-    return a - b\n+    return a + b" in out.meta["diff"]


async def test_edit_of_an_open_buffer_is_versioned_labelled_and_saved(ws, buffer_editor, buffer_tools):
    buffer_editor.open(ws / "a.py")
    buffer_editor.type(ws / "a.py", buffer_editor.buffers[ws / "a.py"][0] + "# unsaved user line\n")
    out = await buffer_tools(
        "edit_file", path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}]
    )
    assert not out.is_error, out.content
    (operation,), label = buffer_editor.applied[-1]
    assert isinstance(operation, TextFileEdit) and operation.version == 2
    assert operation.edits[0].start == (1, 11) and operation.edits[0].end == (1, 16)
    assert label == "agent: edit a.py"
    text, version = buffer_editor.buffers[ws / "a.py"]
    assert "return a + b" in text and text.endswith("# unsaved user line\n") and version == 3
    # saved: what a command runs next reads the edit
    assert buffer_editor.saved == [ws / "a.py"] and (ws / "a.py").read_text() == text


async def test_several_edits_in_one_call_and_replace_all(ws, disk_tools):
    (ws / "m.py").write_text("x = 1\ny = x\nz = x + x\n")
    out = await disk_tools(
        "edit_file",
        path="m.py",
        edits=[
            {"oldText": "x", "newText": "w", "replaceAll": True},
            {"oldText": "y = ", "newText": "yy = "},
        ],
    )
    assert not out.is_error, out.content
    assert (ws / "m.py").read_text() == "w = 1\nyy = w\nz = w + w\n"
    assert out.meta["replacements"] == 5


async def test_ambiguous_match_names_the_lines(ws, disk_tools):
    (ws / "dup.py").write_text("pass\nx = 1\npass\npass\n")
    out = await disk_tools("edit_file", path="dup.py", edits=[{"oldText": "pass", "newText": "..."}])
    assert out.is_error and out.error["code"] == "EDIT_NOT_APPLICABLE"
    assert "occurs 3 times in dup.py (lines 1, 3, 4)" in out.content
    assert (ws / "dup.py").read_text() == "pass\nx = 1\npass\npass\n"


async def test_missing_match_names_candidate_lines(ws, disk_tools):
    whitespace = await disk_tools(
        "edit_file", path="a.py", edits=[{"oldText": "return  a - b", "newText": "x"}]
    )
    assert "oldText not found in a.py" in whitespace.content
    assert "Closest lines: line 2: return a - b" in whitespace.content
    indent = await disk_tools(
        "edit_file", path="a.py", edits=[{"oldText": "def add(a, b):\nreturn a - b", "newText": "x"}]
    )
    assert "different whitespace are at line 1" in indent.content
    nothing = await disk_tools("edit_file", path="a.py", edits=[{"oldText": "zzz qqq", "newText": "x"}])
    assert "Nothing similar" in nothing.content


async def test_one_bad_edit_applies_none(ws, disk_tools):
    before = (ws / "a.py").read_text()
    out = await disk_tools(
        "edit_file",
        path="a.py",
        edits=[{"oldText": "a - b", "newText": "a + b"}, {"oldText": "missing", "newText": "x"}],
    )
    assert out.is_error and "edit 2: oldText not found" in out.content
    assert (ws / "a.py").read_text() == before


async def test_overlapping_edits_are_refused(ws, disk_tools):
    out = await disk_tools(
        "edit_file",
        path="a.py",
        edits=[{"oldText": "return a - b", "newText": "x"}, {"oldText": "a - b", "newText": "y"}],
    )
    assert out.is_error and "edits 1 and 2 overlap" in out.content


async def test_crlf_file_matches_lf_old_text_and_keeps_crlf(ws, disk_tools):
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = await disk_tools("edit_file", path="w.txt", edits=[{"oldText": "one\ntwo", "newText": "1\n2"}])
    assert not out.is_error, out.content
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_user_typing_during_the_edit_loses_nothing(ws, buffer_editor, buffer_tools):
    path = ws / "a.py"
    buffer_editor.open(path)
    user_text = "def add(a, b):\n    return a - b  # the user is here\n"
    buffer_editor.before_apply = lambda: buffer_editor.type(path, user_text)
    out = await buffer_tools("edit_file", path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    assert out.is_error and out.error["code"] == "EDIT_REJECTED"
    assert "not applied" in out.content and "changed meanwhile" in out.content
    # the fresh text comes back to the model, numbered
    assert "2\t    return a - b  # the user is here" in out.content
    assert buffer_editor.buffers[path] == [user_text, 2]  # the user's text is untouched
    # the model edits again against the fresh text
    again = await buffer_tools(
        "edit_file", path="a.py", edits=[{"oldText": "a - b  # the", "newText": "a + b  # the"}]
    )
    assert not again.is_error
    assert buffer_editor.buffers[path][0] == user_text.replace("a - b", "a + b")


async def test_edit_errors(ws, disk_tools):
    missing = await disk_tools("edit_file", path="new.py", edits=[{"oldText": "a", "newText": "b"}])
    assert missing.error["code"] == "NOT_FOUND" and "create_file" in missing.content
    same = await disk_tools("edit_file", path="a.py", edits=[{"oldText": "a - b", "newText": "a - b"}])
    assert same.error["code"] == "NO_CHANGE"
    empty = await disk_tools("edit_file", path="a.py", edits=[{"oldText": "", "newText": "b"}])
    assert "oldText is empty" in empty.content
    (ws / "latin.txt").write_bytes("café\n".encode("latin-1"))
    latin = await disk_tools("edit_file", path="latin.txt", edits=[{"oldText": "caf", "newText": "b"}])
    assert latin.error["code"] == "NOT_UTF8" and (ws / "latin.txt").read_bytes() == "café\n".encode("latin-1")


async def test_edit_then_command_sees_it_on_disk(ws, disk_tools):
    await disk_tools("edit_file", path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    out = await disk_tools("run_command", command=f"{PYTHON} a.py")
    assert out.content.startswith("3")


async def test_edit_of_open_buffer_then_command_sees_it(ws, buffer_editor, buffer_tools):
    buffer_editor.open(ws / "a.py")
    await buffer_tools("edit_file", path="a.py", edits=[{"oldText": "a - b", "newText": "a * b + 10"}])
    out = await buffer_tools("run_command", command=f"{PYTHON} a.py", ctx=Ctx())
    assert out.content.startswith("12"), out.content
