"""Turn revert: the journal undoes a turn's edits and keeps what the user changed since."""

from tool_fakes import BufferEditor, Ctx, Tools

from agent_lsp.workspace.disk_editor import DiskEditor
from agent_lsp.workspace.edit_journal import EditJournal, RevertSkip

TEXT = "".join(f"line {i}\n" for i in range(1, 21))


def setup(ws, editor=None):
    editor = editor or DiskEditor([ws])
    journal = EditJournal()
    return editor, journal, Tools(editor, [ws], journal=journal)


async def test_revert_a_turn_restores_every_file(ws):
    editor, journal, tools = setup(ws)
    before_a = (ws / "a.py").read_text()
    turn = Ctx(turn=3)
    await tools("edit_file", turn, path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    await tools("create_file", turn, path="new.py", content="x = 1\n")
    await tools("delete_file", turn, path="src/util.py")
    await tools("rename_file", turn, path="a.py", newPath="renamed.py")
    await tools("edit_file", turn, path="renamed.py", edits=[{"oldText": "print", "newText": "return"}])
    report = await journal.revert(editor, "s_test", 3)
    assert report.skipped == []
    assert set(report.reverted) == {ws / "a.py", ws / "new.py", ws / "src" / "util.py", ws / "renamed.py"}
    assert (ws / "a.py").read_text() == before_a
    assert not (ws / "new.py").exists() and not (ws / "renamed.py").exists()
    assert (ws / "src" / "util.py").read_text() == "import os\n\nVALUE = 1\n"


async def test_revert_only_touches_that_turn(ws):
    editor, journal, tools = setup(ws)
    await tools("edit_file", Ctx(turn=1), path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    await tools("edit_file", Ctx(turn=2), path="a.py", edits=[{"oldText": "print", "newText": "show"}])
    report = await journal.revert(editor, "s_test", 1)
    assert report.reverted == [ws / "a.py"] and report.skipped == []
    text = (ws / "a.py").read_text()
    assert "a - b" in text and "show(add" in text  # turn 2's edit stays
    assert (await journal.revert(editor, "s_test", 1)).reverted == []  # nothing left to revert
    assert (await journal.revert(editor, "s_other", 2)).reverted == []


async def test_revert_keeps_a_later_user_edit_and_reports_it(ws):
    editor = BufferEditor([ws])
    (ws / "f.txt").write_text(TEXT)
    editor.open(ws / "f.txt")
    editor, journal, tools = setup(ws, editor)
    await tools(
        "edit_file",
        Ctx(turn=1),
        path="f.txt",
        edits=[{"oldText": "line 3\n", "newText": "agent 3\n"}, {"oldText": "line 15\n", "newText": "agent 15\n"}],
    )
    # the user then changes the line the agent wrote at 15, and adds a line at the top
    text = editor.buffers[ws / "f.txt"][0]
    editor.type(ws / "f.txt", "user header\n" + text.replace("agent 15\n", "user 15\n"))
    report = await journal.revert(editor, "s_test", 1)
    assert report.reverted == [ws / "f.txt"]
    assert report.skipped == [RevertSkip(ws / "f.txt", "1 of 2 changes were edited since; left as they are")]
    final = editor.buffers[ws / "f.txt"][0]
    assert final == "user header\n" + TEXT.replace("line 15\n", "user 15\n")
    assert (ws / "f.txt").read_text() == final  # saved, so commands see the revert


async def test_a_change_the_user_already_undid_is_reverted_not_edited_since(ws):
    # the agent changes lines 3 and 15 and deletes line 10; the user undoes the
    # change at 3 and the deletion by hand (Ctrl+Z): reverting the turn puts 15
    # back and says nothing was edited since
    editor = BufferEditor([ws])
    (ws / "f.txt").write_text(TEXT)
    editor.open(ws / "f.txt")
    editor, journal, tools = setup(ws, editor)
    await tools("edit_file", Ctx(turn=1), path="f.txt", edits=[
        {"oldText": "line 3\n", "newText": "agent 3\n"}, {"oldText": "line 10\n", "newText": ""},
        {"oldText": "line 15\n", "newText": "agent 15\n"}])
    editor.type(ws / "f.txt", TEXT.replace("line 15\n", "agent 15\n"))
    report = await journal.revert(editor, "s_test", 1)
    assert report.reverted == [ws / "f.txt"] and report.skipped == []
    assert editor.buffers[ws / "f.txt"][0] == TEXT
    # all of it undone by hand: reverted, nothing to do
    await tools("edit_file", Ctx(turn=2), path="f.txt", edits=[{"oldText": "line 4\n", "newText": "agent 4\n"}])
    editor.type(ws / "f.txt", TEXT)
    report = await journal.revert(editor, "s_test", 2)
    assert report.reverted == [ws / "f.txt"] and report.skipped == []
    assert editor.buffers[ws / "f.txt"][0] == TEXT


async def test_revert_skips_a_file_changed_after_creation(ws):
    editor, journal, tools = setup(ws)
    await tools("create_file", Ctx(turn=1), path="n.py", content="x = 1\n")
    (ws / "n.py").write_text("x = 1\n# the user's line\n")
    report = await journal.revert(editor, "s_test", 1)
    assert report.reverted == [] and report.skipped[0].reason == "the file was changed after the agent created it"
    assert (ws / "n.py").exists()


async def test_revert_refused_by_the_editor_is_reported(ws):
    editor = BufferEditor([ws])
    editor.open(ws / "a.py")
    editor, journal, tools = setup(ws, editor)
    await tools("edit_file", Ctx(turn=1), path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    editor.before_apply = lambda: editor.type(ws / "a.py", editor.buffers[ws / "a.py"][0] + "# typed\n")
    report = await journal.revert(editor, "s_test", 1)
    assert report.reverted == [] and "refused" in report.skipped[0].reason
    assert editor.buffers[ws / "a.py"][0].endswith("# typed\n")


async def test_revert_of_a_deletion_and_insertion_of_lines(ws):
    editor, journal, tools = setup(ws)
    (ws / "f.txt").write_text(TEXT)
    await tools(
        "edit_file",
        Ctx(turn=1),
        path="f.txt",
        edits=[{"oldText": "line 1\nline 2\n", "newText": ""}, {"oldText": "line 20\n", "newText": "line 20\nmore\nlines\n"}],
    )
    (ws / "f.txt").write_text((ws / "f.txt").read_text().replace("line 10\n", "line ten\n"))
    report = await journal.revert(editor, "s_test", 1)
    assert report.skipped == []
    assert (ws / "f.txt").read_text() == TEXT.replace("line 10\n", "line ten\n")


async def test_revert_of_a_rewrite_keeps_unrelated_user_edits(ws):
    editor, journal, tools = setup(ws)
    (ws / "f.txt").write_text(TEXT)
    await tools("write_file", Ctx(turn=1), path="f.txt", content=TEXT.replace("line 2\n", "agent 2\n"))
    (ws / "f.txt").write_text((ws / "f.txt").read_text().replace("line 18\n", "user 18\n"))
    report = await journal.revert(editor, "s_test", 1)
    assert report.reverted == [ws / "f.txt"] and report.skipped == []
    assert (ws / "f.txt").read_text() == TEXT.replace("line 18\n", "user 18\n")
