"""The first model request of a server process against the next ones.

The real server (`python -m agent_lsp.lsp`, driven over LSP by the test
editor) talks to a local OpenAI-format HTTP server that answers as
llama.cpp does (`GET /props` says the window; other probes get a 404). The
model's name is not a well-known one, so its window is asked of the server.
Measured: from the editor sending `agent/followup` to the model server
receiving the chat request. In one server: a session opened as the editors'
chat panels open one (`agent/session/new`), the first question a second
later (the first request of the process); a second session the same way;
a second turn of it. In another server: a first followup with no session
before it (`agent-lsp run`'s case). Each server is left a second after its
start first, so what is measured is the request path, not the start-up.

Run: .venv/bin/python bench/first_request.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from llm_fake_server import FakeServer, Reply, Seen  # noqa: E402
from lsp_harness import running_server  # noqa: E402

SETTLE_S = 1.0  # the editor was opened a moment before
TYPING_S = 1.0  # between opening a session and sending the first question


async def one_run(tmp: Path, cold: bool) -> list[float]:
    workspace = tmp / "ws"
    workspace.mkdir(exist_ok=True)
    fake = FakeServer()
    await fake.start()
    fake.routes["GET /props"] = Reply.json(200, {"default_generation_settings": {"n_ctx": 32768}, "total_slots": 1})
    arrived: list[float] = []

    def respond(seen: Seen) -> Reply:
        arrived.append(time.perf_counter())
        return Reply.openai_text("ok", usage={"prompt_tokens": 900, "completion_tokens": 1, "total_tokens": 901})

    fake.respond = respond
    model = {"provider": "openai", "model": "house-coder", "baseUrl": fake.url + "/v1", "apiKey": "bench"}
    latencies = []
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp / "sessions", settings={"model": model}) as editor:
            await asyncio.sleep(SETTLE_S)  # the editor was opened a moment before
            sid = None
            for step in ("cold", "opened", "opened", "next turn"):
                if step == "cold" and not cold:
                    continue
                if step == "opened":  # the chat panel opens a session, the user types for a moment
                    sid = (await editor.request("agent/session/new", {}))["sessionId"]
                    await asyncio.sleep(TYPING_S)
                before = len(editor.statuses)
                params = {"content": "hello"} | ({"sessionId": sid} if step != "cold" else {})
                sent = time.perf_counter()
                sid = (await editor.request("agent/followup", params))["sessionId"]
                await editor.wait_idle(sid, before)
                latencies.append((arrived[-1] - sent) * 1000)
    finally:
        await fake.stop()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    warm, cold = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            warm.append(asyncio.run(one_run(Path(tmp), cold=False)))
        with tempfile.TemporaryDirectory() as tmp:
            cold.append(asyncio.run(one_run(Path(tmp), cold=True))[0])
    rows = [("first followup of the process, no session before", cold)]
    names = ("first followup of the process, session opened 1 s before", "second session, opened 1 s before",
             "second turn of that session")
    rows += [(name, [r[i] for r in warm]) for i, name in enumerate(names)]
    for name, figures in rows:
        print(f"{name:<58} median {statistics.median(figures):7.1f} ms   [{', '.join(f'{f:.0f}' for f in figures)}]")

if __name__ == "__main__":
    main()
