"""Switching a session's model mid-session and listing the models to pick
from, through the real server against a real local HTTP model server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402


def reply(text: str) -> Reply:
    return Reply.openai_text(text)


def openai_settings(fake: FakeServer, sessions: Path) -> dict:
    return {"model": {"provider": "openai", "model": "house-model-7b", "baseUrl": fake.url + "/v1", "apiKey": "k",
                      "contextWindow": 9000},
            "sessionsDir": str(sessions)}


@pytest.fixture
async def fake():
    server = FakeServer()
    await server.start()
    yield server
    await server.stop()


async def followup(editor, content: str, session_id: str | None = None) -> str:
    before = len(editor.statuses)
    params = {"content": content} | ({"sessionId": session_id} if session_id else {})
    sid = (await editor.request("agent/followup", params))["sessionId"]
    await editor.wait_idle(sid, before)
    return sid


async def test_set_model_changes_the_next_request_and_survives_a_restart(tmp_path: Path, fake: FakeServer):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    fake.queue(reply("one"), reply("two"), reply("three"))
    settings = openai_settings(fake, sessions)
    async with running_server(folders=[workspace], sessions_dir=sessions, settings=settings) as editor:
        sid = await followup(editor, "first")
        switched = await editor.raw_request("agent/session/setModel", {"sessionId": sid, "model": "gpt-4o", "effort": "high"})
        await followup(editor, "second", sid)
        replay = await editor.raw_request("agent/session/replay", {"sessionId": sid})
    assert switched == {"provider": "openai", "model": "gpt-4o", "effort": "high",
                        "previousProvider": "openai", "previousModel": "house-model-7b"}
    first, second = (r.body for r in fake.requests)
    assert (first["model"], second["model"]) == ("house-model-7b", "gpt-4o")
    assert "reasoning_effort" not in first and second["reasoning_effort"] == "high"
    # the second request carries the history of the first turn
    assert [m["content"] for m in second["messages"] if m["role"] == "assistant"] == ["one"]

    events = replay["events"]
    (switch,) = [e["data"] for e in events if e["type"] == "session/model"]
    assert switch["model"] == "gpt-4o"
    # compaction reckons with the window of the model in use: the configured
    # model's is configured, gpt-4o's comes from the table of well-known models
    windows = [e["data"]["contextWindow"] for e in events if e["type"] == "request/context"]
    assert windows == [9000, 128_000]

    # a new server loads the session on the model it switched to
    async with running_server(folders=[workspace], sessions_dir=sessions, settings=settings) as editor:
        await followup(editor, "third", sid)
    assert fake.requests[2].body["model"] == "gpt-4o"


async def test_choosing_the_configured_fallback_uses_its_server_and_window(tmp_path: Path, fake: FakeServer):
    """`model.fallback` at a second server: choosing it sends the next requests
    there, and its window is what that server reports, not the primary's setting."""
    second = FakeServer()
    await second.start()
    second.routes["GET /props"] = Reply.json(200, {"default_generation_settings": {"n_ctx": 4096}})
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    fake.queue(reply("one"))
    second.queue(reply("two"), reply("three"))
    settings = openai_settings(fake, sessions)
    settings["model"]["fallback"] = {"model": "gemma-fallback", "baseUrl": second.url + "/v1"}
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions, settings=settings) as editor:
            sid = await followup(editor, "first")
            await editor.raw_request("agent/session/setModel", {"sessionId": sid, "model": "gemma-fallback"})
            await followup(editor, "second", sid)
            await followup(editor, "third", sid)
            replay = await editor.raw_request("agent/session/replay", {"sessionId": sid})
    finally:
        await second.stop()
    assert [r.body["model"] for r in fake.requests] == ["house-model-7b"]
    assert [r.body["model"] for r in second.requests] == ["gemma-fallback", "gemma-fallback"]
    assert second.requests[0].headers["authorization"] == "Bearer k"  # the key comes from the same settings
    routes = [e["data"] for e in replay["events"] if e["type"] == "request/context"]
    assert [r.get("contextWindow") for r in routes] == [9000, 4096]  # known from the fallback's first step


async def test_set_model_rejects_an_unknown_provider_readably(tmp_path: Path, fake: FakeServer):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    fake.queue(reply("one"), reply("two"))
    async with running_server(folders=[workspace], sessions_dir=sessions, settings=openai_settings(fake, sessions)) as editor:
        sid = await followup(editor, "first")
        with pytest.raises(JsonRpcInvalidParams, match="unknown provider 'mistral'.*openai, anthropic, scripted"):
            await editor.raw_request("agent/session/setModel", {"sessionId": sid, "provider": "mistral", "model": "x"})
        with pytest.raises(JsonRpcInvalidParams, match="effort"):
            await editor.raw_request("agent/session/setModel", {"sessionId": sid, "model": "x", "effort": "max"})
        await followup(editor, "second", sid)
    assert [r.body["model"] for r in fake.requests] == ["house-model-7b", "house-model-7b"]


async def test_model_list_offers_the_configured_model_and_the_endpoints(tmp_path: Path, fake: FakeServer):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    fake.routes["GET /v1/models"] = Reply.json(200, {"object": "list", "data": [
        {"id": "house-model-7b", "object": "model"}, {"id": "gpt-4o-mini", "object": "model"}, {"id": "qwen3:8b"}]})
    async with running_server(folders=[workspace], sessions_dir=sessions, settings=openai_settings(fake, sessions)) as editor:
        listed = await editor.raw_request("agent/model/list", {"workspaceUri": workspace.as_uri()})
        again = await editor.raw_request("agent/model/list", {})
    assert listed["models"] == [
        {"provider": "openai", "model": "house-model-7b", "source": "configured", "contextWindow": 9000},
        {"provider": "openai", "model": "gpt-4o-mini", "source": "endpoint", "contextWindow": 128_000},
        {"provider": "openai", "model": "qwen3:8b", "source": "endpoint", "contextWindow": 40_960},
    ]
    assert "note" not in listed or listed["note"] is None
    assert again == listed
    # the second listing came from the cache; the endpoint was asked once, with the key
    (probe,) = [p for p in fake.probes if p.path == "/v1/models"]
    assert probe.headers["authorization"] == "Bearer k"


async def test_model_list_without_an_endpoint_listing_offers_the_configured_model_and_says_why(tmp_path: Path, fake: FakeServer):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    fake.routes["GET /v1/models"] = Reply.json(503, {"error": "loading"})
    async with running_server(folders=[workspace], sessions_dir=sessions, settings=openai_settings(fake, sessions)) as editor:
        listed = await editor.raw_request("agent/model/list", {})
    assert [m["model"] for m in listed["models"]] == ["house-model-7b"]
    assert "HTTP 503" in listed["note"]
