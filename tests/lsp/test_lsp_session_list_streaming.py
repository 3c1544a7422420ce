"""agent/session/list reads and searches the session files off the server's
event loop: a listing of many sessions is answered while another session
streams, and that stream goes on to its end (bench/session_search.py prints
how long its chunks waited)."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import running_server

from agent_lsp.config import Settings
from agent_lsp.store import SessionStore
from agent_lsp.workspace.host import sessions_dir_for

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
