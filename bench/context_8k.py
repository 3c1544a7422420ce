"""A 30-step session at an 8k context window: the tokens of every request
beside the window, and that none overflows.

The real server (`python -m agent_lsp.lsp`, driven over LSP by the test
editor, the product's own system prompt and tools) talks to a local HTTP
server that answers as llama.cpp runs a model with `-c 8192`
(tests/llm/llm_window_server.py): `GET /props` says the window, a prompt is
counted by the server's own rule (about 3.3 characters a token, not the
agent's characters / 4) and one that does not fit is rejected with
llama.cpp's exact error. The scripted model reads the folder's files one
call a step, ten steps a turn over three turns (30 tool calls, each result
a large file), then answers; a compaction's summary request gets a short
summary.

Printed: each request's prompt tokens (the server's count) and its share of
the window, which requests were summaries, the compactions the user was
shown, the tokens sent in all, and whether any request was rejected.

Run: .venv/bin/python bench/context_8k.py [--window 8192] [--lines 150] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from llm_fake_server import FakeServer, Seen  # noqa: E402
from llm_window_server import WindowedModel  # noqa: E402
from lsp_harness import running_server  # noqa: E402

STEPS_PER_TURN = 10
TURNS = 3


def write_files(folder: Path, count: int, lines: int) -> None:
    for n in range(1, count + 1):
        body = "".join(f"def part_{n}_{i}(value):  # checksum {n * 7919 + i}\n    return value * {i} + {n}\n"
                       for i in range(lines // 2))
        (folder / f"part_{n:02d}.py").write_text(body, encoding="utf-8")


async def run(window: int, lines: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        write_files(workspace, STEPS_PER_TURN * TURNS, lines)
        fake = FakeServer()
        await fake.start()
        model = WindowedModel(fake, window, tool="read_file", steps_per_turn=STEPS_PER_TURN,
                              arguments=lambda n: {"path": f"part_{n:02d}.py"})
        requests: list[dict] = []
        answer = fake.respond

        def respond(seen: Seen) -> object:
            summaries, rejected = model.summaries, len(model.rejected)
            reply = answer(seen)
            tokens = model.rejected[-1] if len(model.rejected) > rejected else model.prompts[-1]
            requests.append({"tokens": tokens, "summary": model.summaries > summaries,
                             "rejected": len(model.rejected) > rejected, "tools": len(seen.body.get("tools") or ())})
            return reply

        fake.respond = respond
        settings = {"model": {"provider": "openai", "model": "local-coder", "baseUrl": fake.url + "/v1",
                              "apiKey": "bench"}}
        started = time.perf_counter()
        try:
            async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                      settings=settings) as editor:
                sid = None
                for batch in range(TURNS):
                    before = len(editor.statuses)
                    params = {"content": f"start batch {batch}: read the next ten parts and note their checksums"}
                    if sid is not None:
                        params["sessionId"] = sid
                    sid = (await editor.request("agent/followup", params))["sessionId"]
                    await editor.wait_idle(sid, before)
                events = editor.events[sid]
        finally:
            await fake.stop()
    ends = [e["data"]["reason"]["kind"] for e in events if e["type"] == "turn/end"]
    contexts = [e["data"] for e in events if e["type"] == "request/context"]
    return {
        "window": window,
        "requests": requests,
        "turns": ends,
        "toolCalls": len([e for e in events if e["type"] == "tool/call"]),
        "compactions": len([e for e in events if e["type"] == "compaction/start"]),
        "compactionErrors": len([e for e in events if e["type"] == "compaction/end" and e["data"].get("error")]),
        "fixedTokens": contexts[-1].get("fixedTokens") if contexts else None,
        "windowKnown": contexts[0].get("contextWindow") if contexts else None,
        "sent": sum(r["tokens"] for r in requests),
        "rejected": sum(1 for r in requests if r["rejected"]),
        "largest": max((r["tokens"] for r in requests), default=0),
        "summaries": sum(1 for r in requests if r["summary"]),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--lines", type=int, default=150, help="lines of each file the model reads")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = asyncio.run(run(args.window, args.lines))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    window = figures["window"]
    print(f"{'request':>7}  {'tokens':>6}  {'window':>6}  {'share':>5}  kind")
    for n, r in enumerate(figures["requests"], 1):
        kind = "REJECTED" if r["rejected"] else ("summary" if r["summary"] else f"step ({r['tools']} tools)")
        print(f"{n:>7}  {r['tokens']:>6}  {window:>6}  {r['tokens'] / window:>5.0%}  {kind}")
    print(f"turns: {', '.join(figures['turns'])}; tool calls: {figures['toolCalls']}; "
          f"window known from the first step: {figures['windowKnown']}; fixed prompt: {figures['fixedTokens']} tokens")
    print(f"compactions shown: {figures['compactions']} ({figures['summaries']} with a summary request, the others "
          f"shrank old tool results; {figures['compactionErrors']} failed); "
          f"requests: {len(figures['requests'])}; tokens sent: {figures['sent']:,}; largest: {figures['largest']:,} "
          f"of {window:,}; {figures['seconds']} s")
    print("no request overflowed" if figures["rejected"] == 0 else f"{figures['rejected']} requests were REJECTED")


if __name__ == "__main__":
    main()
