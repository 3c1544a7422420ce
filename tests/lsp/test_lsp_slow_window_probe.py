"""A model server slow to say its context window does not hold the first
request back: the real server against a local HTTP server whose window
endpoints hang (each until the probe's own timeout) sends the first request
within a moment of the session's first event, with the stand-in window's
tool set, and
once the server has said its window (a 4k one, as Ollama's `/api/show` says
it) the next turn knows it and offers the small tool set."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402

SMALL_SET = {"read_file", "edit_file", "grep", "run_command"}
PROMPT_WITHIN_S = 3.5  # the waits allow 1.2 s, the rest is the machine; it waited for the probe before (6 s here)


def _hanging() -> Reply:
    return Reply(headers={"content-type": "application/json"}, end="stall")


async def test_the_first_request_does_not_wait_for_a_hanging_window_probe(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    arrived: list[float] = []

    def respond(seen):
        arrived.append(time.time())
        return Reply.openai_text("hello")

    fake.respond = respond
    # vLLM's and llama.cpp's window endpoints hang until the probe gives up on each
    # (2 s), then Ollama's answers 4k, slowly
    fake.routes.update({"GET /v1/models": _hanging(), "GET /props": _hanging(),
                        "POST /api/show": Reply.json(200, {"parameters": "num_ctx 4096"})})
    fake.routes["POST /api/show"].delay_s = 1.5  # its body ends 1.5 s after it began
    model = {"provider": "openai", "model": "local-coder", "baseUrl": fake.url + "/v1", "apiKey": "k"}
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                  settings={"model": model}) as editor:
            before = len(editor.statuses)
            sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
            await editor.wait_idle(sid, before)
            # from the session's first event (not the server's start, which loads its code meanwhile)
            first_after = arrived[0] - min(e["time"] for e in editor.events[sid]) / 1000
            await editor.wait_for(lambda: "/api/show" in [p.path for p in fake.probes], what="the last probe")
            await asyncio.sleep(2.0)  # its answer is in
            before = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "again"})
            await editor.wait_idle(sid, before)
            events = editor.events[sid]
    finally:
        await fake.stop()

    print(f"first request {first_after * 1000:.0f} ms after the session's first event")
    assert first_after < PROMPT_WITHIN_S, first_after
    first, second = (seen.body for seen in fake.requests)
    assert not {t["function"]["name"] for t in first["tools"]} <= SMALL_SET  # the stand-in (8k): the full set
    assert {t["function"]["name"] for t in second["tools"]} <= SMALL_SET | {"language"}
    windows = [e["data"].get("contextWindow") for e in events if e["type"] == "request/context"]
    assert windows[-1] == 4096
