"""The listing's summaries are kept in the index file with each session file's
size and time, so a fresh server reads only the files that changed since; what
it lists must be what reading every file whole gives."""

import os
import shutil
import sqlite3

from agent_lsp.store import SessionStore
from agent_lsp.store.search_index import INDEX_FILE


def turn(session, text, *, usage=None, chunks=3):
    n = session.last_turn() + 1
    session.append("turn/start", {"turn": n})
    session.append("user/message", {"turn": n, "step": 1, "surfaceOp": "append", "message": {
        "role": "user", "id": f"m{n}", "source": "user", "content": [{"type": "text", "text": text}]}})
    for i in range(chunks):
        session.append("assistant/chunk", {"turn": n, "step": 1, "chunk": {"type": "text-delta", "text": f"w{i} "}})
    session.append("assistant/message", {"turn": n, "step": 1, "surfaceOp": "append", "message": {
        "role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}]}})
    end = {"turn": n, "reason": {"kind": "completed"}}
    if usage is not None:
        end["sessionUsage"] = usage
    session.append("turn/end", end)
    session.flush()


def full_read(directory, tmp_path):
    """The summaries a store gives that has never seen these files (a copy with no index file)."""
    copy = tmp_path / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(directory, copy, ignore=shutil.ignore_patterns(INDEX_FILE + "*"))
    store = SessionStore(copy)
    try:
        return comparable(store.list())
    finally:
        store.index.close()


def comparable(summaries):
    return sorted((s.id, s.title, s.created, s.updated, s.turns, s.event_count, s.parent, s.meta, s.usage, s.size)
                  for s in summaries)


def varied_sessions(store):
    plain = store.create()
    turn(plain, "fix the   parser\nplease", usage={"inputTokens": 10, "outputTokens": 2})
    named = store.create(title="named at creation", meta={"workspaceUri": "file:///ws"})
    turn(named, "hello")
    titled = store.create()
    turn(titled, "first words")
    titled.append("session/title", {"title": "a title from the model"})
    titled.flush()
    empty = store.create()
    forked = store.fork(plain.id, title=None)
    turn(forked, "what if", usage={"inputTokens": 30, "outputTokens": 5})
    return {"plain": plain, "named": named, "titled": titled, "empty": empty, "forked": forked}


def test_a_fresh_store_lists_what_a_full_read_gives_after_sessions_grew(tmp_path):
    directory = tmp_path / "sessions"
    store = SessionStore(directory)
    sessions = varied_sessions(store)
    first = comparable(store.list())  # records saved here
    assert first == full_read(directory, tmp_path)

    # the sessions grow after the records were saved: new turns, a rename, usage gone from the last turn/end
    turn(sessions["plain"], "more", usage={"inputTokens": 50, "outputTokens": 9})
    sessions["titled"].append("session/title", {"title": "renamed by the user"})
    sessions["titled"].flush()
    turn(sessions["empty"], "now it has a message")
    turn(sessions["forked"], "no usage recorded this time")
    turn(sessions["named"], "second", chunks=40)

    fresh = SessionStore(directory)
    listed = comparable(fresh.list())
    assert listed == full_read(directory, tmp_path)
    by_id = {s.id: s for s in fresh.list()}
    assert by_id[sessions["titled"].id].title == "renamed by the user"
    assert by_id[sessions["empty"].id].title == "now it has a message"
    assert by_id[sessions["forked"].id].parent == sessions["plain"].id
    assert by_id[sessions["forked"].id].usage is None
    assert by_id[sessions["plain"].id].usage == {"inputTokens": 50, "outputTokens": 9}
    assert by_id[sessions["plain"].id].turns == 2
    # and the same store again, from what it keeps in memory
    assert comparable(fresh.list()) == listed


def test_a_rewritten_or_shrunk_file_is_read_again_whole(tmp_path):
    directory = tmp_path / "sessions"
    store = SessionStore(directory)
    long, other, retitled = store.create(), store.create(), store.create()
    for n in range(3):
        turn(long, f"turn {n} of the long one")
    turn(other, "short")
    turn(retitled, "untitled")
    store.list()
    long_path, other_path = store.path_of(long.id), store.path_of(other.id)
    long_bytes, other_bytes = long_path.read_bytes(), other_path.read_bytes()
    store.index.close()

    # one file cut back to its first turn (a shrink); one replaced by a longer, different session
    # (a new file moved over it); one rewritten in place with a different header line
    lines = long_bytes.splitlines(keepends=True)
    long_path.write_bytes(b"".join(lines[:8]))
    replacement = tmp_path / "replacement.jsonl"
    replacement.write_bytes(other_bytes.replace(b"short", b"SHORT") + b"".join(lines[8:]))
    os.replace(replacement, other_path)
    retitled_path = store.path_of(retitled.id)
    retitled_path.write_bytes(retitled_path.read_bytes().replace(b'"title": null', b'"title": "set by hand"')
                              + b"".join(lines[8:]))

    fresh = SessionStore(directory)
    by_id = {s.id: s for s in fresh.list()}
    assert comparable(by_id.values()) == full_read(directory, tmp_path)
    assert by_id[long.id].turns == 1 and by_id[other.id].title == "SHORT" and by_id[other.id].turns == 3
    assert by_id[retitled.id].title == "set by hand"


def test_damaged_or_missing_summaries_are_made_again_from_the_files(tmp_path):
    directory = tmp_path / "sessions"
    store = SessionStore(directory)
    sessions = varied_sessions(store)
    expected = comparable(store.list())
    store.index.close()

    with sqlite3.connect(directory / INDEX_FILE) as db:
        db.execute("UPDATE summaries SET record = 'not json' WHERE id = ?", (sessions["plain"].id,))
        db.execute("UPDATE summaries SET record = '{\"v\": 1}' WHERE id = ?", (sessions["titled"].id,))
    assert comparable(SessionStore(directory).list()) == expected

    (directory / INDEX_FILE).write_bytes(b"this is not an SQLite file" * 100)
    for suffix in ("-wal", "-shm"):
        (directory / (INDEX_FILE + suffix)).unlink(missing_ok=True)
    assert comparable(SessionStore(directory).list()) == expected


def test_a_deleted_session_leaves_no_summary_behind(tmp_path):
    directory = tmp_path / "sessions"
    store = SessionStore(directory)
    kept, dropped, vanished = store.create(), store.create(), store.create()
    for session in (kept, dropped, vanished):
        turn(session, "words")
    store.list()
    store.delete(dropped.id)
    store.path_of(vanished.id).unlink()  # removed behind the server's back
    assert [s.id for s in store.list()] == [kept.id]
    with sqlite3.connect(directory / INDEX_FILE) as db:
        assert [sid for (sid,) in db.execute("SELECT id FROM summaries")] == [kept.id]
