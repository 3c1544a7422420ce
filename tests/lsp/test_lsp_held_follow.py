"""What a second window follows a session with while the first holds it
(the VS Code panel reads on from where its read-only snapshot ended): a replay
page from the held session's log says a turn runs there, and from the
snapshot's end on gives what that turn added, its end included."""

from __future__ import annotations

import asyncio
import time

from lsp_harness import running_server


async def _replay_until(editor, params: dict, done, timeout: float = 15.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        page = await editor.request("agent/session/replay", params)
        if done(page) or time.monotonic() > deadline:
            return page
        await asyncio.sleep(0.1)


async def test_a_held_session_is_followed_from_where_its_snapshot_ended(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    script = [{"when": "first", "text": "one"}, {"when": "second", "hang": "thinking it over"}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script) as first:
        sid = (await first.request("agent/followup", {"content": "first"}))["sessionId"]
        await first.wait_idle(sid)
        statuses = len(first.statuses)
        await first.request("agent/followup", {"sessionId": sid, "content": "second"})
        async with running_server(folders=[workspace], sessions_dir=sessions, script=[]) as second:
            snapshot = await _replay_until(second, {"sessionId": sid, "seq": 0, "limit": 1000},
                                           lambda p: p["status"] == "running")
            assert snapshot["heldByPid"] and snapshot["status"] == "running"
            end = snapshot["endSeq"]
            await first.request("agent/cancel", {"sessionId": sid})
            await first.wait_idle(sid, statuses)
            page = await _replay_until(second, {"sessionId": sid, "seq": end, "limit": 200},
                                       lambda p: p["status"] == "idle")
            assert page["status"] == "idle" and page["heldByPid"]
            assert page["startSeq"] == end and [e["type"] for e in page["events"]][-1] == "turn/end"
