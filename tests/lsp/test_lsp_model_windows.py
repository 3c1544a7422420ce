"""The context window of a local model, known on every path: once known, the
model list shows what the server runs each model with, and the Anthropic provider
pointed at a local server asks it as the OpenAI-compatible one does (so
its first step knows the window and compaction works there too). The real
server against a local HTTP server that answers as llama.cpp does
(`GET /props` says `n_ctx`; both APIs served)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply, recording  # noqa: E402
from lsp_harness import running_server  # noqa: E402


async def say_hi(editor) -> list[dict]:
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
    await editor.wait_idle(sid, before)
    return editor.events[sid]


async def test_a_local_server_s_window_is_listed_and_known_on_the_anthropic_path(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    fake.routes["GET /props"] = Reply.json(200, {"default_generation_settings": {"n_ctx": 6144}, "total_slots": 1})
    fake.routes["GET /v1/models"] = Reply.json(200, {"object": "list", "data": [{"id": "qwen-local.gguf"}]})
    fake.routes["GET /v1/models?limit=1000"] = Reply.json(200, {"data": [{"type": "model", "id": "qwen-local.gguf"}]})
    openai = {"provider": "openai", "model": "house-coder", "baseUrl": fake.url + "/v1", "apiKey": "k"}
    anthropic = {"provider": "anthropic", "model": "house-claude", "baseUrl": fake.url, "apiKey": "k"}
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                  settings={"model": openai}) as editor:
            fake.queue(Reply.openai_text("hello"))
            await say_hi(editor)
            listed = (await editor.raw_request("agent/model/list", {}))["models"]
            editor.configure({"model": anthropic})
            fake.queue(Reply.sse(recording("anthropic_text.sse")))
            events = await say_hi(editor)
            listed_anthropic = (await editor.raw_request("agent/model/list", {}))["models"]
    finally:
        await fake.stop()
    assert listed == [
        {"provider": "openai", "model": "house-coder", "source": "configured", "contextWindow": 6144},
        {"provider": "openai", "model": "qwen-local.gguf", "source": "endpoint", "contextWindow": 6144},
    ]
    assert listed_anthropic == [
        {"provider": "anthropic", "model": "house-claude", "source": "configured", "contextWindow": 6144},
        {"provider": "anthropic", "model": "qwen-local.gguf", "source": "endpoint", "contextWindow": 6144},
    ]
    assert [r.path for r in fake.requests] == ["/v1/chat/completions", "/v1/messages"]
    route = [e["data"] for e in events if e["type"] == "request/context"][-1]
    assert route["provider"] == "anthropic" and route["contextWindow"] == 6144  # from its first step
    assert [e for e in events if e["type"] == "turn/end"][-1]["data"]["reason"]["kind"] == "completed"
