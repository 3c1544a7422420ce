"""agent/model/check and the failures a turn reports, through the real server
and a real local HTTP model server: each names the endpoint URL and, as data,
the setting to change; a refused endpoint fails at once."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402

pytestmark = pytest.mark.asyncio


def answer(text: str) -> Reply:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
    finish = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return Reply.sse(f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(finish)}\n\ndata: [DONE]\n\n".encode(), awkward=False)


@pytest.fixture
async def model():
    fake = FakeServer()
    await fake.start()
    yield fake
    await fake.stop()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def openai_at(url: str, key: str = "k") -> dict:
    return {"model": {"provider": "openai", "baseUrl": url, "apiKey": key, "model": "m"}}


async def test_a_working_endpoint_answers_the_check_with_its_url_and_latency(tmp_path, model):
    model.queue(answer("pong"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=openai_at(f"{model.url}/v1")) as editor:
        result = await editor.raw_request("agent/model/check", {"workspaceUri": tmp_path.as_uri()})
    assert result["ok"] is True and "error" not in result
    assert (result["provider"], result["model"], result["url"]) == ("openai", "m", f"{model.url}/v1")
    assert isinstance(result["latencyMs"], int)
    (request,) = model.requests
    assert request.body["max_tokens"] == 1 and request.headers["authorization"] == "Bearer k"


async def test_a_rejected_key_says_auth_and_names_the_key_setting(tmp_path, model):
    model.queue(Reply.json(401, {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=openai_at(f"{model.url}/v1", "bad")) as editor:
        result = await editor.raw_request("agent/model/check", {})
    assert result["ok"] is False
    error = result["error"]
    assert (error["code"], error["status"], error["setting"], error["url"]) == ("AUTH", 401, "model.apiKey", f"{model.url}/v1")
    assert "bad" not in json.dumps(result)
    assert f"{model.url}/v1 refused the key; check the API key in the model.apiKey setting" in error["message"]


async def test_a_rejected_key_is_told_in_the_clients_own_words_when_it_names_where_keys_live(tmp_path, model):
    model.queue(Reply.json(401, {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}))
    settings = openai_at(f"{model.url}/v1", "bad")
    settings["model"]["apiKeySource"] = 'the "Agent: Set API Key…" command'
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings) as editor:
        result = await editor.raw_request("agent/model/check", {})
    error = result["error"]
    assert error["setting"] == "model.apiKey"  # the data stays the settings key
    assert error["message"].endswith(f'({model.url}/v1 refused the key; check the API key in the "Agent: Set API Key…" command)')
    assert "model.apiKey" not in error["message"]


async def test_a_refused_endpoint_fails_the_check_and_the_turn_at_once_naming_the_url_setting(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=openai_at(url)) as editor:
        result = await editor.raw_request("agent/model/check", {})
        assert result["ok"] is False
        assert (result["error"]["code"], result["error"]["setting"], result["error"]["url"]) == ("NETWORK", "model.baseUrl", url)

        sid = (await editor.request("agent/followup", {"content": "hello"}))["sessionId"]
        await editor.wait_idle(sid)
        assert "llm/retry" not in editor.event_types(sid)
        (error,) = [p["error"] for p in editor.of("agent/error")]
        assert (error["code"], error["url"], error["setting"], error["phase"]) == ("NETWORK", url, "model.baseUrl", "connect")


async def test_the_scripted_model_checks_ok_without_an_endpoint(tmp_path):
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", script=[{"text": "hi"}]) as editor:
        result = await editor.raw_request("agent/model/check", {})
    assert result["ok"] is True and result["provider"] == "scripted" and "url" not in result
