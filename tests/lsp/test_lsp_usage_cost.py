"""Usage and cost: each turn's and the session's tokens (cached and reasoning
ones included) and an estimated cost, from a real local HTTP model server,
through the real server, into `turn/end`, `agent/session/list` and
`agent-lsp sessions list`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402

SUITE_SWITCHES = ("AGENT_LSP_LANGUAGE_SERVERS", "AGENT_LSP_SANDBOXED_COMMANDS")  # tests/conftest.py


def reply(text: str, prompt: int, cached: int, completion: int, reasoning: int = 0) -> Reply:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion,
             "prompt_tokens_details": {"cached_tokens": cached}, "completion_tokens_details": {"reasoning_tokens": reasoning}}
    chunks = [{"choices": [{"index": 0, "delta": {"content": text}}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
              {"choices": [], "usage": usage}]
    return Reply.sse(b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n")


@pytest.mark.parametrize("model, prices, expected", [
    # configured prices (USD per million tokens): turn 1 = (1000*2 + 100*8) / 1e6,
    # turn 2 = (1000 fresh * 2 + 2000 cached * 0.5 + 200 * 8) / 1e6
    ("house-model-7b", {"house-model": {"input": 2.0, "output": 8.0, "cacheRead": 0.5}}, (0.0028, 0.0046)),
    # the built-in list price of gpt-4.1 (2 / 8, cached input 0.5): the same figures
    ("gpt-4.1-2025-04-14", {}, (0.0028, 0.0046)),
])
async def test_cost_adds_up_over_a_two_turn_session_with_cached_tokens(tmp_path: Path, model, prices, expected):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    fake = FakeServer()
    await fake.start()
    fake.queue(reply("one", 1000, 0, 100), reply("two", 3000, 2000, 200, reasoning=50))
    settings = {"model": {"provider": "openai", "model": model, "baseUrl": fake.url + "/v1", "apiKey": "k", "prices": prices},
                "sessionsDir": str(sessions)}
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions, settings=settings) as editor:
            before = len(editor.statuses)
            sid = (await editor.request("agent/followup", {"content": "first"}))["sessionId"]
            await editor.wait_idle(sid, before)
            before = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "second"})
            await editor.wait_idle(sid, before)
            listed = await editor.raw_request("agent/session/list", {})
            ends = [e["data"] for e in editor.events[sid] if e["type"] == "turn/end"]
    finally:
        await fake.stop()

    first, second = ends
    assert {k: first["usage"][k] for k in ("inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens")} == {
        "inputTokens": 1000, "outputTokens": 100, "cacheReadTokens": 0, "reasoningTokens": 0}
    assert second["usage"]["cacheReadTokens"] == 2000 and second["usage"]["reasoningTokens"] == 50
    assert first["usage"]["costUsd"] == pytest.approx(expected[0])
    assert second["usage"]["costUsd"] == pytest.approx(expected[1])
    total = second["sessionUsage"]
    assert (total["inputTokens"], total["outputTokens"], total["cacheReadTokens"]) == (4000, 300, 2000)
    assert total["costUsd"] == pytest.approx(sum(expected))
    assert first["sessionUsage"] == first["usage"]

    (info,) = listed["sessions"]
    assert info["usage"] == total

    # the command line shows the same session total
    env = {k: v for k, v in os.environ.items() if (not k.startswith("AGENT_LSP_") or k in SUITE_SWITCHES) and not k.endswith("_API_KEY")}
    env.update(AGENT_LSP_SESSIONS_DIR=str(sessions), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-m", "agent_lsp", "sessions", "list", "-w", str(workspace)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    assert "TOKENS" in header and "CACHED" in header and "COST" in header
    assert row.split()[4:7] == ["4300", "2000", f"~${sum(expected):.4f}"]
    assert "estimate" in done.stderr


async def test_a_model_without_a_price_counts_tokens_and_says_so(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    fake.queue(reply("one", 500, 100, 20))
    settings = {"model": {"provider": "openai", "model": "local-coder", "baseUrl": fake.url + "/v1", "apiKey": "k"}}
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings=settings) as editor:
            before = len(editor.statuses)
            sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
            await editor.wait_idle(sid, before)
            (end,) = [e["data"] for e in editor.events[sid] if e["type"] == "turn/end"]
    finally:
        await fake.stop()
    assert end["usage"]["inputTokens"] == 500 and end["usage"]["cacheReadTokens"] == 100
    assert "costUsd" not in end["usage"] and end["usage"]["unpricedModels"] == ["local-coder"]
