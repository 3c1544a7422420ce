"""kill -9 of the server at random points of a streaming turn with tools:
after a restart the session loads, and every event the client was shown is
in it, under the seq the client knows (no seq names another event).

A seeded run of a few kills; `bench/crash_kill.py` runs many more.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from lsp_harness import running_server

KILLS = 4
SEED = 16


def turn_script(n: int) -> list[dict]:
    """Three steps of streamed text (one chunk per character, 1 ms apart) with a read and a command between them."""
    text = "".join(f"word{i} " for i in range(n))
    return [
        {"text": "A " + text, "chunkDelayMs": 1, "tools": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "B " + text, "chunkDelayMs": 1, "tools": [{"name": "run_command", "arguments": {"command": "sleep 0.2; echo ran"}}]},
        {"text": "C " + text, "chunkDelayMs": 1},
    ]


def shown(events: list[dict]) -> dict[int, dict]:
    """seq -> what the client was shown for it; a merged chunk stands for seq..lastSeq."""
    seen: dict[int, dict] = {}
    for e in events:
        seen[e["seq"]] = e
        for seq in range(e["seq"] + 1, e.get("lastSeq", e["seq"]) + 1):
            seen[seq] = {"merged": e["seq"]}
    return seen


def assert_nothing_shown_was_lost(client_events: list[dict], stored: list[dict]) -> None:
    assert [e["seq"] for e in stored] == list(range(len(stored)))
    seen = shown(client_events)
    assert max(seen) < len(stored), f"the client saw seq {max(seen)}, the reloaded log has {len(stored)} events"
    for seq, event in seen.items():
        if "merged" in event:
            continue
        last = event.get("lastSeq", seq)
        if last == seq:
            assert stored[seq] == event, f"seq {seq} names another event after the crash"
        else:  # a merged chunk: the same deltas, in order
            parts = stored[seq : last + 1]
            assert {p["type"] for p in parts} == {"assistant/chunk"}
            assert "".join(p["data"]["chunk"]["text"] for p in parts) == event["data"]["chunk"]["text"]


@pytest.mark.slow
async def test_kill_9_mid_turn_loses_nothing_the_client_saw(tmp_path):
    rng = random.Random(SEED)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello\n")
    sessions = tmp_path / "sessions"
    for kill in range(KILLS):
        after_s = rng.uniform(0.05, 1.6)
        async with running_server(folders=[workspace], sessions_dir=sessions, script=turn_script(80)) as editor:
            sid = (await editor.request("agent/followup", {"content": f"go {kill}"}))["sessionId"]
            await asyncio.sleep(after_s)
            await editor.kill()
            client_events = list(editor.events[sid])
        assert client_events, "the client was shown events before the kill"
        async with running_server(folders=[workspace], sessions_dir=sessions) as editor:
            loaded = await editor.request("agent/session/load", {"sessionId": sid})
        stored = loaded["events"]
        assert_nothing_shown_was_lost(client_events, stored)
        # the turn is closed (by the repair if the kill was mid-turn), after everything the client saw
        types = [e["type"] for e in stored]
        last_start = len(types) - 1 - types[::-1].index("turn/start")
        assert "turn/end" in types[last_start:]
