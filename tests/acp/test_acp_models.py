"""The model option over ACP against a real local HTTP model server: the endpoint's models
are offered once listed, and choosing one sends the session's next request to it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import acp
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from acp_harness import AcpTestClient, acp_agent  # noqa: E402
from llm_fake_server import FakeServer, Reply  # noqa: E402


def reply(text: str) -> Reply:
    return Reply.openai_text(text)


@pytest.fixture
async def fake():
    server = FakeServer()
    await server.start()
    yield server
    await server.stop()


async def test_the_endpoint_s_models_are_offered_and_one_is_chosen_for_the_next_request(tmp_path, fake):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake.routes["GET /v1/models"] = Reply.json(200, {"object": "list", "data": [
        {"id": "house-model-7b", "object": "model"}, {"id": "gpt-4o-mini", "object": "model"}]})
    fake.queue(reply("one"), reply("two"))
    client = AcpTestClient()
    model = {"provider": "openai", "model": "house-model-7b", "baseUrl": fake.url + "/v1", "apiKey": "k"}
    async with acp_agent(client, tmp_path / "sessions", model_extra=model) as conn:
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = new.session_id
        assert [o.value for o in new.config_options[0].options] == ["openai/house-model-7b"]  # answered before listing
        for _ in range(300):
            listed = [u for u in client.of(sid) if u.session_update == "config_option_update"]
            if listed:
                break
            await asyncio.sleep(0.05)
        (update,) = listed
        (option,) = update.config_options
        assert [o.value for o in option.options] == ["openai/house-model-7b", "openai/gpt-4o-mini"]
        assert option.current_value == "openai/house-model-7b"

        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("first")]), 30)
        await conn.set_config_option(config_id="model", session_id=sid, value="openai/gpt-4o-mini")
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("second")]), 30)
    assert [r.body["model"] for r in fake.requests] == ["house-model-7b", "gpt-4o-mini"]
    assert client.text(sid) == "onetwo"


async def test_choosing_the_configured_fallback_sends_the_next_request_to_its_server(tmp_path, fake):
    second = FakeServer()
    await second.start()
    try:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        fake.queue(reply("one"))
        second.queue(reply("two"))
        client = AcpTestClient()
        model = {"provider": "openai", "model": "house-model-7b", "baseUrl": fake.url + "/v1", "apiKey": "k",
                 "fallback": {"model": "gemma-fallback", "baseUrl": second.url + "/v1"}}
        async with acp_agent(client, tmp_path / "sessions", model_extra=model) as conn:
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = new.session_id
            assert "openai/gemma-fallback" in [o.value for o in new.config_options[0].options]
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("first")]), 30)
            await conn.set_config_option(config_id="model", session_id=sid, value="openai/gemma-fallback")
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("second")]), 30)
    finally:
        await second.stop()
    assert [r.body["model"] for r in fake.requests] == ["house-model-7b"]
    assert [r.body["model"] for r in second.requests] == ["gemma-fallback"]
    assert client.text(sid) == "onetwo"


async def test_with_only_a_base_url_the_endpoint_s_one_model_is_used_and_shown(tmp_path, fake):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake.routes["GET /v1/models"] = Reply.json(200, {"object": "list", "data": [{"id": "qwen-local.gguf"}]})
    fake.queue(reply("hello"))
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", model_extra={"provider": "auto", "baseUrl": fake.url + "/v1"}) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("hi")]), 30)
        updates = [u for u in client.of(sid) if u.session_update == "config_option_update"]
    assert [r.body["model"] for r in fake.requests] == ["qwen-local.gguf"]
    assert updates and updates[-1].config_options[0].current_value == "openai/qwen-local.gguf"
