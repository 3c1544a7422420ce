"""The providers' model listings (for the model pickers) against a real local HTTP server."""

from __future__ import annotations

import pytest

from agent_lsp.llm.anthropic import AnthropicProvider
from agent_lsp.llm.model_list import ModelListError
from agent_lsp.llm.openai import OpenAIProvider
from llm_fake_server import Reply


async def test_openai_compatible_models_are_listed_with_the_key(server):
    server.routes["GET /v1/models"] = Reply.json(200, {"object": "list", "data": [{"id": "a"}, {"id": "b"}, {"x": 1}]})
    provider = OpenAIProvider(base_url=server.url + "/v1", api_key="sk-one")
    try:
        assert await provider.list_models() == ["a", "b"]
    finally:
        await provider.aclose()
    (probe,) = server.probes
    assert probe.headers["authorization"] == "Bearer sk-one"


@pytest.mark.parametrize("base", ["", "/v1"])
async def test_anthropic_models_are_listed_with_its_headers(server, base):
    server.routes["GET /v1/models?limit=1000"] = Reply.json(200, {"data": [
        {"type": "model", "id": "claude-sonnet-4-5-20250929", "display_name": "Claude Sonnet 4.5"}], "has_more": False})
    provider = AnthropicProvider(base_url=server.url + base, api_key="sk-ant-two")
    try:
        assert await provider.list_models() == ["claude-sonnet-4-5-20250929"]
    finally:
        await provider.aclose()
    (probe,) = server.probes
    assert probe.headers["x-api-key"] == "sk-ant-two" and probe.headers["anthropic-version"]


@pytest.mark.parametrize("answer, reason", [
    (Reply.json(401, {"error": "bad key"}), "HTTP 401"),
    (Reply.json(200, {"models": []}), "without a model list"),
    (Reply(parts=[b"<html>"], headers={"content-type": "text/html"}), "did not answer JSON"),
])
async def test_a_listing_that_fails_says_why(server, answer, reason):
    server.routes["GET /v1/models"] = answer
    provider = OpenAIProvider(base_url=server.url + "/v1")
    try:
        with pytest.raises(ModelListError, match=reason):
            await provider.list_models()
    finally:
        await provider.aclose()
