"""Several sessions streaming from a real HTTP model server at once: each
gets its chunks, and a cancel lands while the others go on streaming."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402

SESSIONS = 4
DELTAS = 300  # one part each, 10 ms apart: each stream lasts ~3 s


def stream(deltas: int) -> Reply:
    def event(delta: dict, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [choice]}).encode() + b"\n\n"

    parts = [event({"content": f"w{i} "}) for i in range(deltas)] + [event({}, "stop"), b"data: [DONE]\n\n"]
    return Reply(parts=parts, delay_s=0.01)


async def test_a_cancel_lands_while_other_sessions_stream(tmp_path):
    fake = FakeServer()
    await fake.start()
    fake.queue(*(stream(DELTAS) for _ in range(SESSIONS)))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = {"model": {"provider": "openai", "baseUrl": f"{fake.url}/v1", "model": "m", "contextWindow": 8192}}
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings=settings,
                                  env={"OPENAI_API_KEY": "sk-test"}) as editor:
            sids = [(await editor.request("agent/followup", {"content": "go"}))["sessionId"] for _ in range(SESSIONS)]
            await editor.wait_for(lambda: all(editor.streamed_text(sid) for sid in sids), what="every session streaming")
            victim, others = sids[0], sids[1:]
            sent = time.monotonic()
            await editor.request("agent/cancel", {"sessionId": victim})
            await editor.wait_idle(victim)
            cancelled_in = time.monotonic() - sent
            still_streaming = [sid for sid in others if (sid, "idle") not in editor.statuses]
            for sid in others:
                await editor.wait_idle(sid)
    finally:
        await fake.stop()

    assert still_streaming == others, "the cancel waited for the other streams"
    assert cancelled_in < 2.0  # generous: the figure is bench/server_relay.py's
    for sid in others:
        assert editor.streamed_text(sid) == "".join(f"w{i} " for i in range(DELTAS))
    assert len(editor.streamed_text(victim)) < len(editor.streamed_text(others[0]))
