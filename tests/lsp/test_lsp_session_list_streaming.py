"""agent/session/list reads and searches the session files off the server's
event loop: a listing of many sessions is answered while another session
streams, and that stream goes on to its end (bench/session_search.py prints
how long its chunks waited); a fresh server brings the listing and the index
up to date by itself."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from lsp_harness import running_server

from agent_lsp.config import Settings
from agent_lsp.store import SessionStore
from agent_lsp.store.search_index import INDEX_FILE
from agent_lsp.workspace.session_location import sessions_dir_for

ANSWER = "a slow answer streamed while the history is listed " * 2


def write_history(store_dir: Path, count: int) -> None:
    store = SessionStore(store_dir)
    for n in range(count):
        session = store.create()
        session.append("turn/start", {"turn": 1})
        session.append("user/message", {"turn": 1, "step": 1, "surfaceOp": "append", "message": {
            "role": "user", "id": "m", "source": "user", "content": [{"type": "text", "text": f"old question {n}"}]}})
        for i in range(200):
            session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": f"w{i} "}})
        session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
        session.close()
    store.index.close()


async def test_a_listing_is_answered_while_a_session_streams_and_the_stream_completes(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    write_history(sessions_dir_for(workspace, Settings(sessions_dir=str(sessions))), 80)
    script = [{"text": ANSWER, "chunkDelayMs": 5}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script) as editor:
        before = len(editor.statuses)
        sid = (await editor.request("agent/followup", {"content": "stream something"}))["sessionId"]
        await editor.wait_for(lambda: editor.streamed_text(sid), what="the first chunk")
        listed = (await editor.request("agent/session/list", {"query": "question"}))["sessions"]
        await editor.wait_idle(sid, before)
        assert len(listed) == 80 and {s["title"] for s in listed} >= {"old question 0", "old question 79"}
        assert editor.streamed_text(sid) == ANSWER


def indexed(store_dir: Path) -> tuple[int, int]:
    """(sessions whose text is indexed, sessions whose summary is kept) in the folder's index file."""
    try:
        with sqlite3.connect(f"file:{store_dir / INDEX_FILE}?mode=ro", uri=True) as db:
            return (db.execute("SELECT count(*) FROM files").fetchone()[0],
                    db.execute("SELECT count(*) FROM summaries").fetchone()[0])
    except sqlite3.Error:  # not made yet, or being made
        return (0, 0)


async def test_a_fresh_server_indexes_the_folders_history_by_itself_soon_after_it_opens_it(tmp_path: Path):
    """So the first picker or search the user opens does not wait for hundreds of files to be read."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    store_dir = sessions_dir_for(workspace, Settings(sessions_dir=str(sessions)))
    write_history(store_dir, 30)
    for leftover in store_dir.glob(INDEX_FILE + "*"):
        leftover.unlink()
    async with running_server(folders=[workspace], sessions_dir=sessions) as editor:
        await editor.request("agent/session/new", {})  # the folder opened; nothing listed or searched
        deadline = time.monotonic() + 20
        while min(indexed(store_dir)) < 30 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert min(indexed(store_dir)) >= 30  # (and the new session, once it has something to list)
        listed = (await editor.request("agent/session/list", {"query": "question 17"}))["sessions"]
        assert [s["title"] for s in listed] == ["old question 17"]
