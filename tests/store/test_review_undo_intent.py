"""An undo of reviewed changes whose files were all done when the process
stopped, before its events reached the log: the next load records the undo of
every file and queues what the model is told, once (a second load adds
nothing)."""

from __future__ import annotations

from pathlib import Path

from agent_lsp.agent.inbox import Inbox
from agent_lsp.store.store import SessionStore
from agent_lsp.workspace.revert_intent import RevertIntents


def test_an_undo_stopped_while_recording_is_recorded_and_told_at_the_next_load(tmp_path: Path):
    store = SessionStore(tmp_path / "sessions")
    session = store.create()
    sid = session.id
    session.append("turn/start", {"turn": 1})
    session.flush()
    files = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for f in files:
        f.write_text("the agent's change\n", encoding="utf-8")
    intents = RevertIntents(tmp_path / "sessions" / "reverts", tmp_path)
    intent = intents.begin(session, "review-undo", 1, files)
    for f in files:
        f.write_text("as the user wrote it\n", encoding="utf-8")
    events = [("review/resolve", {"action": "undo", "path": str(f), "hunks": [], "diff": f"-x {f.name}"}, None) for f in files]
    messages = [{"id": f"msg_{f.stem}", "content": f"undid {f.name}", "source": "review",
                 "note": {"kind": "undo", "text": f"↶ you undid a change in {f.name}"}} for f in files]
    intents.commit(intent, events, messages)
    # the process stops here: nothing of it is in the log
    session.close()

    for load in range(2):
        intents = RevertIntents(tmp_path / "sessions" / "reverts", tmp_path)  # a new process
        session = store.load(sid)
        recovery = intents.recover(session)
        assert (recovery is not None) == (load == 0)
        if recovery is not None:
            assert recovery.outcome == "completed"
            assert "a.txt" in recovery.message and "b.txt" in recovery.message
        resolved = [e.data["path"] for e in session.events.held() if e.type == "review/resolve"]
        assert resolved == [str(f) for f in files]
        inbox = Inbox(session, lambda name, payload: None)
        inbox.rebuild(session.events.held())
        assert [(m["id"], m["source"], m["delivery"], m["note"]["kind"]) for m in inbox.next_step] == [
            ("msg_a", "review", "inject", "undo"), ("msg_b", "review", "inject", "undo")]
        assert [f.read_text(encoding="utf-8") for f in files] == ["as the user wrote it\n"] * 2
        session.close()


def test_an_undo_stopped_half_way_puts_the_files_back_and_names_the_editors_buffers(tmp_path: Path):
    store = SessionStore(tmp_path / "sessions")
    session = store.create()
    sid = session.id
    on_disk, in_buffer = tmp_path / "disk.txt", tmp_path / "open.txt"
    for f in (on_disk, in_buffer):
        f.write_text("the agent's change\n", encoding="utf-8")
    intents = RevertIntents(tmp_path / "sessions" / "reverts", tmp_path)
    intents.begin(session, "review-undo", 1, [on_disk, in_buffer], buffers=[in_buffer])
    on_disk.write_text("as the user wrote it\n", encoding="utf-8")  # undone; the process stops here
    session.close()

    session = store.load(sid)
    recovery = RevertIntents(tmp_path / "sessions" / "reverts", tmp_path).recover(session)
    assert recovery is not None and recovery.outcome == "rolled-back" and recovery.paths == [str(on_disk)]
    assert on_disk.read_text(encoding="utf-8") == "the agent's change\n"
    assert "put back as they were before it: disk.txt" in recovery.message
    assert "unsaved buffers of open.txt may hold part of it" in recovery.message
    assert [e.data["operation"] for e in session.events.held() if e.type == "revert/recovered"] == ["review-undo"]
    session.close()
