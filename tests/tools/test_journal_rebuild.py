"""Turn revert from the session log: a journal rebuilt from the durable tool results
(as after a server restart) undoes a turn like the live one did."""

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tool_fakes import BufferEditor, Ctx, Tools

from agent_lsp.tools.text import replace_spans
from agent_lsp.tools.journal_record import FileChange, to_record

from agent_lsp.workspace.disk_editor import DiskEditor
from agent_lsp.workspace.edit_journal import (
    REVERT_EVENT,
    EditJournal,
    RevertSkip,
    already_reverted_reason,
    revert_event_data,
)

TEXT = "".join(f"line {i}\n" for i in range(1, 21))


class Log:
    """The tool/result events as the session log keeps them (JSON round trip)."""

    def __init__(self):
        self.events: list[dict] = []

    async def run(self, tools: Tools, name: str, ctx: Ctx, **arguments):
        out = await tools(name, ctx, **arguments)
        assert not out.is_error, out.content
        data = {"turn": ctx.turn, "name": name, "meta": out.meta}
        self.events.append(json.loads(json.dumps({"type": "tool/result", "data": data})))
        return out


def restarted(log: Log) -> EditJournal:
    journal = EditJournal()
    journal.rebuild("s_test", log.events)
    return journal


async def test_rebuilt_journal_reverts_every_kind_of_change(ws):
    editor, log = DiskEditor([ws]), Log()
    tools = Tools(editor, [ws], journal=EditJournal())
    before_a = (ws / "a.py").read_text()
    turn = Ctx(turn=3)
    await log.run(tools, "edit_file", turn, path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    await log.run(tools, "create_file", turn, path="new.py", content="x = 1\n")
    await log.run(tools, "delete_file", turn, path="src/util.py")
    await log.run(tools, "rename_file", turn, path="a.py", newPath="renamed.py")
    await log.run(tools, "edit_file", turn, path="renamed.py", edits=[{"oldText": "print", "newText": "return"}])
    report = await restarted(log).revert(editor, "s_test", 3)
    assert report.skipped == []
    assert (ws / "a.py").read_text() == before_a
    assert not (ws / "new.py").exists() and not (ws / "renamed.py").exists()
    assert (ws / "src" / "util.py").read_text() == "import os\n\nVALUE = 1\n"


async def test_rebuilt_revert_keeps_a_later_user_edit_and_reports_it(ws):
    editor, log = BufferEditor([ws]), Log()
    (ws / "f.txt").write_text(TEXT)
    editor.open(ws / "f.txt")
    tools = Tools(editor, [ws], journal=EditJournal())
    edits = [{"oldText": "line 3\n", "newText": "agent 3\n"}, {"oldText": "line 15\n", "newText": "agent 15\n"}]
    await log.run(tools, "edit_file", Ctx(turn=1), path="f.txt", edits=edits)
    text = editor.buffers[ws / "f.txt"][0]
    editor.type(ws / "f.txt", "user header\n" + text.replace("agent 15\n", "user 15\n"))
    report = await restarted(log).revert(editor, "s_test", 1)
    assert report.reverted == [ws / "f.txt"]
    assert report.skipped == [RevertSkip(ws / "f.txt", "1 of 2 changes were edited since; left as they are")]
    assert editor.buffers[ws / "f.txt"][0] == "user header\n" + TEXT.replace("line 15\n", "user 15\n")


async def test_rebuilt_revert_of_deleted_and_inserted_lines_around_a_user_edit(ws):
    editor, log = DiskEditor([ws]), Log()
    (ws / "f.txt").write_text(TEXT)
    tools = Tools(editor, [ws], journal=EditJournal())
    edits = [{"oldText": "line 1\nline 2\n", "newText": ""}, {"oldText": "line 20\n", "newText": "line 20\nmore\nlines\n"}]
    await log.run(tools, "edit_file", Ctx(turn=1), path="f.txt", edits=edits)
    (ws / "f.txt").write_text((ws / "f.txt").read_text().replace("line 10\n", "line ten\n"))
    report = await restarted(log).revert(editor, "s_test", 1)
    assert report.skipped == []
    assert (ws / "f.txt").read_text() == TEXT.replace("line 10\n", "line ten\n")


async def test_rebuilt_revert_of_a_rewrite_and_of_a_created_file_changed_since(ws):
    editor, log = DiskEditor([ws]), Log()
    (ws / "f.txt").write_text(TEXT)
    tools = Tools(editor, [ws], journal=EditJournal())
    await log.run(tools, "write_file", Ctx(turn=1), path="f.txt", content=TEXT.replace("line 2\n", "agent 2\n"))
    await log.run(tools, "create_file", Ctx(turn=1), path="n.py", content="x = 1\n")
    (ws / "f.txt").write_text((ws / "f.txt").read_text().replace("line 18\n", "user 18\n"))
    (ws / "n.py").write_text("x = 1\n# the user's line\n")
    report = await restarted(log).revert(editor, "s_test", 1)
    assert report.reverted == [ws / "f.txt"]
    assert report.skipped == [RevertSkip(ws / "n.py", "the file was changed after the agent created it")]
    assert (ws / "f.txt").read_text() == TEXT.replace("line 18\n", "user 18\n")


async def test_a_reverted_turn_is_not_brought_back_by_a_rebuild_and_live_turns_win(ws):
    editor, log = DiskEditor([ws]), Log()
    journal = EditJournal()
    tools = Tools(editor, [ws], journal=journal)
    await log.run(tools, "edit_file", Ctx(turn=1), path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    await log.run(tools, "edit_file", Ctx(turn=2), path="a.py", edits=[{"oldText": "print", "newText": "show"}])
    assert (await journal.revert(editor, "s_test", 1)).reverted == [ws / "a.py"]
    assert journal.rebuild("s_test", log.events) == 0  # turn 1 reverted, turn 2 live already
    assert (await journal.revert(editor, "s_test", 1)).reverted == []
    report = await journal.revert(editor, "s_test", 2)
    assert report.reverted == [ws / "a.py"] and "print(add" in (ws / "a.py").read_text()


async def test_a_revert_is_answered_once_and_the_log_record_keeps_it_reverted_after_a_restart(ws):
    editor, log = DiskEditor([ws]), Log()
    tools = Tools(editor, [ws], journal=EditJournal())
    await log.run(tools, "edit_file", Ctx(turn=1), path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    await log.run(tools, "create_file", Ctx(turn=1), path="new.py", content="x = 1\n")
    journal = restarted(log)
    first = await journal.revert(editor, "s_test", 1)
    assert sorted(first.reverted) == [ws / "a.py", ws / "new.py"] and first.reverted_at is not None
    reason = already_reverted_reason(1, first.reverted_at)
    assert reason.startswith("turn 1 was already reverted at ") and reason.endswith(" UTC")
    # the same server: nothing is done again, and the answer says why
    (ws / "new.py").write_text("x = 1\n")  # the user makes the file again: it is theirs now
    again = await journal.revert(editor, "s_test", 1)
    assert again.reverted == [] and again.reverted_at is None and again.already_reverted_at == first.reverted_at
    assert sorted(again.skipped, key=lambda s: s.path) == [RevertSkip(ws / "a.py", reason), RevertSkip(ws / "new.py", reason)]
    # a restart: the log has the tool results and the revert record
    log.events.append(json.loads(json.dumps({"seq": 99, "time": first.reverted_at, "type": REVERT_EVENT,
                                             "data": revert_event_data(1, first)})))
    after_restart = restarted(log)
    assert after_restart.changes("s_test", 1) == []
    report = await after_restart.revert(editor, "s_test", 1)
    assert report.reverted == [] and report.reverted_at is None
    assert sorted(report.skipped, key=lambda s: s.path) == [RevertSkip(ws / "a.py", reason), RevertSkip(ws / "new.py", reason)]
    assert (ws / "new.py").read_text() == "x = 1\n"


async def test_changes_made_after_a_revert_are_reverted_by_the_next_one(ws):
    editor, log, live = DiskEditor([ws]), Log(), EditJournal()
    tools = Tools(editor, [ws], journal=live)
    await log.run(tools, "edit_file", Ctx(turn=1), path="a.py", edits=[{"oldText": "a - b", "newText": "a + b"}])
    first = await live.revert(editor, "s_test", 1)
    log.events.append({"time": first.reverted_at, "type": REVERT_EVENT, "data": revert_event_data(1, first)})
    # the turn was still running: it edits again after the revert
    await log.run(tools, "edit_file", Ctx(turn=1), path="a.py", edits=[{"oldText": "print", "newText": "show"}])
    for journal in (live, restarted(log)):  # live, and rebuilt from the log
        assert [c.path for c in journal.changes("s_test", 1)] == [ws / "a.py"]
    report = await restarted(log).revert(editor, "s_test", 1)
    assert report.reverted == [ws / "a.py"] and "print(add" in (ws / "a.py").read_text()


async def test_a_damaged_record_is_ignored(ws):
    journal = EditJournal()
    events = [{"type": "tool/result", "data": {"turn": 1, "meta": {"journal": [{"op": "nonsense"}, {"op": "edit"}]}}}]
    assert journal.rebuild("s_test", events) == 0


pieces = st.lists(st.sampled_from(["a", "b\n", "\n", "\r\n", "xy", "é"]), max_size=14).map("".join)


@st.composite
def text_and_spans(draw):
    text = draw(pieces)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    if len(cuts) % 2:
        cuts.append(len(text))
    spans = []
    for start, end in zip(cuts[::2], cuts[1::2]):
        if spans and start < spans[-1][1]:
            continue
        spans.append((start, end, draw(pieces)))
    return text, spans


@settings(max_examples=300, deadline=None)
@given(text_and_spans())
def test_a_rebuilt_change_reverts_to_the_exact_text(case):
    before, spans = case
    after = replace_spans(before, spans)
    if after == before:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "f.txt"
        path.write_bytes(after.encode("utf-8"))
        record = to_record(FileChange(path, before, after, spans=tuple(spans)))
        journal = EditJournal()
        journal.rebuild("s", [{"type": "tool/result", "data": {"turn": 1, "meta": {"journal": [json.loads(json.dumps(record))]}}}])
        report = asyncio.run(journal.revert(DiskEditor([root]), "s", 1))
        assert report.skipped == []
        assert path.read_bytes().decode("utf-8") == before


def test_two_deletions_that_meet_are_reverted_in_order(tmp_path):
    # Found by the property above: both hunks land at line 0 of the new text, and
    # inserts at one position must keep their order (LSP's rule for TextEdits).
    path = tmp_path / "f.txt"
    path.write_bytes(b"")
    record = to_record(FileChange(path, "b\na", "", spans=((0, 2, ""), (2, 3, ""))))
    journal = EditJournal()
    journal.rebuild("s", [{"type": "tool/result", "data": {"turn": 1, "meta": {"journal": [record]}}}])
    asyncio.run(journal.revert(DiskEditor([tmp_path]), "s", 1))
    assert path.read_text() == "b\na"
