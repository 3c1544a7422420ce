"""An editor's settings with a model server's base URL and no model name,
through the real server, against a local HTTP server that lists one model
(as llama.cpp's server does): the session switches to it at its first step,
and the clients see the switch as a `session/model` event; the model list
offers that model as the configured one (not the default name the server
does not have), and the window the settings give applies to it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402


async def test_a_base_url_alone_uses_the_endpoint_s_one_model_everywhere(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    fake.routes["GET /v1/models"] = Reply.json(200, {"object": "list", "data": [{"id": "qwen-local.gguf"}]})
    fake.queue(Reply.openai_text("hello"))
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                  settings={"model": {"baseUrl": fake.url + "/v1", "contextWindow": 6144}}) as editor:
            before = len(editor.statuses)
            sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
            await editor.wait_idle(sid, before)
            listed = (await editor.raw_request("agent/model/list", {}))["models"]
            events = editor.events[sid]
    finally:
        await fake.stop()
    assert [r.body["model"] for r in fake.requests] == ["qwen-local.gguf"]
    (switch,) = [e["data"] for e in events if e["type"] == "session/model"]
    assert (switch["provider"], switch["model"]) == ("openai", "qwen-local.gguf")
    assert [e["data"]["contextWindow"] for e in events if e["type"] == "request/context"] == [6144]
    assert [(m["model"], m["source"]) for m in listed] == [("qwen-local.gguf", "configured")]
