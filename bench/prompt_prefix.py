"""Prompt prefix stability over a 20-step session, files opened between steps.

The real server (`python -m agent_lsp.lsp`, driven over LSP by the test
editor) talks to a local OpenAI-format HTTP model server. The session has 10
turns of 2 steps (an `edit_file` the editor holds while the user opens a
file, then a reply); another file is opened before each turn, so every step
sees a new open file. The model server acts as a prompt cache does: it
reports as cached the part of each prompt (tools, system prompt, history, in
that order) that starts like an earlier prompt, in tokens estimated at 4
bytes each, through `prompt_tokens_details.cached_tokens`.

Printed beside the target: the bytes of each request's prompt that are not
the previous prompt's bytes unchanged (target 0: the previous prompt is a
prefix of the next), the `request/header` changes logged, and the cached
tokens the server reported back to the client in the session's usage.

Run: .venv/bin/python bench/prompt_prefix.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from lsprotocol import types  # noqa: E402

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402

TURNS = 10
BYTES_PER_TOKEN = 4


def prompt_bytes(body: dict) -> bytes:
    """The prompt as the model reads it: tools, then the messages (system prompt first)."""
    return (json.dumps(body.get("tools")) + "".join(json.dumps(m) for m in body["messages"])).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on slice equality: fast for prompts of 100s of KB
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _sse(*payloads: dict | str) -> bytes:
    return b"".join(b"data: " + (p if isinstance(p, str) else json.dumps(p)).encode() + b"\n\n" for p in payloads)


class PromptCache(deque):
    """The fake server's reply queue, answering each request as it arrives: the
    scripted reply, with usage that counts the prompt's cached prefix."""

    def __init__(self, fake: FakeServer):
        super().__init__()
        self.fake = fake
        self.seen: list[bytes] = []
        self.step = 0

    def __bool__(self) -> bool:
        return True

    def popleft(self) -> Reply:
        body = self.fake.requests[-1].body
        prompt = prompt_bytes(body)
        cached = max((common_prefix(prompt, earlier) for earlier in self.seen), default=0)
        self.seen.append(prompt)
        usage = {"prompt_tokens": len(prompt) // BYTES_PER_TOKEN, "completion_tokens": 8,
                 "prompt_tokens_details": {"cached_tokens": cached // BYTES_PER_TOKEN}}
        self.step += 1
        if self.step % 2:  # step 1 of a turn: an edit the editor holds
            turn = (self.step + 1) // 2
            args = {"path": "main.py", "edits": [{"oldText": f"v{turn - 1} ", "newText": f"v{turn} "}]}
            call = {"index": 0, "id": f"call_{turn}", "type": "function",
                    "function": {"name": "edit_file", "arguments": json.dumps(args)}}
            events = [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
                      {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
        else:
            events = [{"choices": [{"index": 0, "delta": {"content": "Done: the version is bumped."}}]},
                      {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
        return Reply.sse(_sse(*events, {"choices": [], "usage": usage}, "[DONE]"), awkward=False)


def open_file(editor, path: Path) -> None:
    editor.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.resolve().as_uri(), language_id="python", version=1, text=path.read_text(encoding="utf-8"))))


async def run(tmp: Path) -> None:
    workspace = tmp / "ws"
    workspace.mkdir()
    (workspace / "main.py").write_text("VERSION = 'v0 '\n", encoding="utf-8")
    (workspace / "AGENTS.md").write_text("Keep the version string in main.py.\n" * 40, encoding="utf-8")
    for i in range(2 * TURNS):
        (workspace / f"module_{i:02}.py").write_text(f"X = {i}\n", encoding="utf-8")
    fake = FakeServer()
    await fake.start()
    cache = PromptCache(fake)
    fake.replies = cache
    model = {"provider": "openai", "model": "gpt-4.1", "baseUrl": fake.url + "/v1", "apiKey": "bench", "promptCacheKey": True}
    started = time.perf_counter()
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp / "sessions", settings={"model": model}) as editor:
            sid = None
            for turn in range(TURNS):
                open_file(editor, workspace / f"module_{2 * turn:02}.py")  # between turns
                editor.hold_edits = asyncio.Event()
                edits = len(editor.applied_edits)
                before = len(editor.statuses)
                params = {"content": f"bump the version to v{turn + 1}"} | ({"sessionId": sid} if sid else {})
                sid = (await editor.request("agent/followup", params))["sessionId"]
                await editor.wait_for(lambda: len(editor.applied_edits) > edits, what="the edit")
                open_file(editor, workspace / f"module_{2 * turn + 1:02}.py")  # between step 1 and step 2
                editor.hold_edits.set()
                await editor.wait_idle(sid, before)
            events = editor.events[sid]
    finally:
        await fake.stop()
    elapsed = time.perf_counter() - started

    prompts = cache.seen
    changed = [len(prev) - common_prefix(prev, cur) for prev, cur in zip(prompts, prompts[1:])]
    headers = [e["data"]["reason"] for e in events if e["type"] == "request/header"]
    usages = [e["data"].get("usage") or {} for e in events if e["type"] == "assistant/message"]
    reported_cached = sum(u.get("cacheReadTokens", 0) for u in usages)
    reported_input = sum(u.get("inputTokens", 0) for u in usages)
    keys = {seen.body.get("prompt_cache_key") for seen in fake.requests}
    print(f"prompt prefix over {len(prompts)} steps ({TURNS} turns x 2), a file opened before every step; {elapsed:.1f} s")
    print(f"  prompt size, first -> last step: {len(prompts[0]):,} -> {len(prompts[-1]):,} bytes")
    print(f"  bytes of the previous prompt changed, per step: max {max(changed)}, total {sum(changed)}   target: 0")
    print(f"  request/header logged: {headers}   target: ['initial']")
    print(f"  cached tokens reported in the session's usage: {reported_cached:,} of {reported_input:,} input tokens "
          f"({reported_cached / max(reported_input, 1):.0%}; the first request has no cache)")
    print(f"  prompt_cache_key values sent: {len(keys)}   target: 1 (the session id)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(Path(tmp)))


if __name__ == "__main__":
    main()
