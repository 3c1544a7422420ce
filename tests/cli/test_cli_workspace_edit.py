"""The headless client writes the agent's edits to disk: positions are LSP
UTF-16 positions, line endings are kept, resource operations work."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_lsp.cli.workspace_edit import WorkspaceEditError, apply_text_edits, apply_workspace_edit


def _edit(sl: int, sc: int, el: int, ec: int, text: str) -> dict:
    return {"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}, "newText": text}


def test_utf16_positions_after_astral_characters():
    # "😀" is two UTF-16 code units: character 3 is right after "a😀".
    text = "a😀b = 1\nnext\n"
    assert apply_text_edits(text, [_edit(0, 3, 0, 4, "B")]) == "a😀B = 1\nnext\n"


def test_edits_all_refer_to_the_original_text():
    text = "one\ntwo\nthree\n"
    edits = [_edit(2, 0, 2, 5, "THREE"), _edit(0, 0, 0, 3, "ONE ONE")]
    assert apply_text_edits(text, edits) == "ONE ONE\ntwo\nTHREE\n"


def test_inserts_at_one_position_keep_their_order():
    assert apply_text_edits("x", [_edit(0, 0, 0, 0, "a"), _edit(0, 0, 0, 0, "b")]) == "abx"


def test_crlf_line_endings_are_kept(tmp_path: Path):
    path = tmp_path / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\n")
    edit = {"documentChanges": [{"textDocument": {"uri": path.as_uri(), "version": None},
                                 "edits": [_edit(1, 0, 1, 6, "2nd")]}]}
    apply_workspace_edit(edit)
    assert path.read_bytes() == b"first\r\n2nd\r\n"


def test_position_past_the_end_of_a_line_means_its_end():
    assert apply_text_edits("ab\ncd\n", [_edit(0, 99, 0, 99, "!")]) == "ab!\ncd\n"


def test_an_insert_where_a_replacement_starts_goes_before_it():
    # The same result in either array order, as the server's own DiskEditor gives.
    replace, insert = _edit(0, 1, 0, 3, "X"), _edit(0, 1, 0, 1, ">")
    assert apply_text_edits("abcd", [replace, insert]) == apply_text_edits("abcd", [insert, replace]) == "a>Xd"


def test_an_edit_for_another_host_or_scheme_is_refused(tmp_path: Path):
    path = tmp_path / "a.txt"
    path.write_text("keep")
    for uri in ("file://build-server" + path.as_posix(), "untitled:Untitled-1"):
        with pytest.raises(WorkspaceEditError, match="another host|not a file path"):
            apply_workspace_edit({"changes": {uri: [_edit(0, 0, 0, 4, "gone")]}})
    assert path.read_text() == "keep"


def test_overlapping_edits_are_refused():
    with pytest.raises(WorkspaceEditError):
        apply_text_edits("abcdef", [_edit(0, 0, 0, 4, "x"), _edit(0, 2, 0, 5, "y")])


def test_create_rename_delete_then_edit(tmp_path: Path):
    old, new, gone = tmp_path / "old.py", tmp_path / "pkg" / "new.py", tmp_path / "gone.txt"
    old.write_text("print(1)\n")
    gone.write_text("bye")
    created = tmp_path / "created.py"
    edit = {"documentChanges": [
        {"kind": "create", "uri": created.as_uri()},
        {"textDocument": {"uri": created.as_uri(), "version": None}, "edits": [_edit(0, 0, 0, 0, "x = 1\n")]},
        {"kind": "rename", "oldUri": old.as_uri(), "newUri": new.as_uri()},
        {"kind": "delete", "uri": gone.as_uri()},
    ]}
    applied = apply_workspace_edit(edit)
    assert created.read_text() == "x = 1\n"
    assert new.read_text() == "print(1)\n" and not old.exists()
    assert not gone.exists()
    assert applied.deleted == [gone]


def test_changes_map_form(tmp_path: Path):
    path = tmp_path / "a.txt"
    path.write_text("hello\n")
    apply_workspace_edit({"changes": {path.as_uri(): [_edit(0, 0, 0, 5, "bye")]}})
    assert path.read_text() == "bye\n"


def test_failure_names_the_failing_operation_and_stops(tmp_path: Path):
    first = tmp_path / "first.txt"
    first.write_text("1")
    missing = tmp_path / "missing.txt"
    edit = {"documentChanges": [
        {"textDocument": {"uri": first.as_uri(), "version": None}, "edits": [_edit(0, 0, 0, 1, "one")]},
        {"textDocument": {"uri": missing.as_uri(), "version": None}, "edits": [_edit(0, 0, 0, 0, "x")]},
        {"kind": "create", "uri": (tmp_path / "never.txt").as_uri()},
    ]}
    with pytest.raises(WorkspaceEditError) as caught:
        apply_workspace_edit(edit)
    assert caught.value.failed_change == 1
    assert "missing.txt" in str(caught.value)
    assert first.read_text() == "one"  # failureHandling "abort": what ran stays
    assert not (tmp_path / "never.txt").exists()


def test_create_refuses_to_overwrite_unless_asked(tmp_path: Path):
    path = tmp_path / "exists.txt"
    path.write_text("keep")
    with pytest.raises(WorkspaceEditError):
        apply_workspace_edit({"documentChanges": [{"kind": "create", "uri": path.as_uri()}]})
    apply_workspace_edit({"documentChanges": [{"kind": "create", "uri": path.as_uri(),
                                               "options": {"ignoreIfExists": True}}]})
    assert path.read_text() == "keep"
    apply_workspace_edit({"documentChanges": [{"kind": "create", "uri": path.as_uri(),
                                               "options": {"overwrite": True}}]})
    assert path.read_text() == ""
