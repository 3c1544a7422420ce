"""Local model servers (llama.cpp, Ollama, vLLM, LM Studio) behind the
OpenAI-compatible provider: the request fields a user sets reach the server,
a max_tokens is always sent, and the context window is asked of the server,
each kind answered the way it answers."""

from __future__ import annotations

import json

import pytest

from agent_lsp.config.environment import model_environment
from agent_lsp.llm.factory import create_provider
from agent_lsp.llm.settings import ModelSettings
from agent_lsp.llm.types import ModelRequest
from llm_fake_server import Reply, recording

USER = ({"role": "user", "id": "m1", "source": "user", "content": [{"type": "text", "text": "hi"}]},)


async def _ask(resolved, server, **request) -> dict:
    """One model request through the provider; the body the server got."""
    server.queue(Reply.sse(recording("openai_text.sse")) if resolved.provider_name == "openai"
                 else Reply.sse(recording("anthropic_text.sse")))
    async for _ in resolved.provider.stream(ModelRequest(
            provider=resolved.provider_name, model=resolved.model, system="", messages=USER, **request)):
        pass
    return server.requests[-1].body


@pytest.fixture
async def local(server):
    """The provider `create_provider` makes for a local endpoint and an unknown model."""
    made = []

    def make(**settings):
        resolved = create_provider(ModelSettings.model_validate(settings),
                                   model_environment({"OPENAI_BASE_URL": server.url + "/v1", "AGENT_LSP_MODEL": "local-coder:7b"}))
        made.append(resolved)
        return resolved

    yield make
    for resolved in made:
        await resolved.provider.aclose()


async def test_request_field_settings_reach_the_server(server, local):
    resolved = local(topP=0.8, stop=["\n\n\n"], extraBody={"repeat_penalty": 1.1, "stream_options": None},
                     temperature=0.2)
    body = await _ask(resolved, server, temperature=0.2)
    assert body["top_p"] == 0.8 and body["stop"] == ["\n\n\n"] and body["repeat_penalty"] == 1.1
    assert body["temperature"] == 0.2
    assert "stream_options" not in body  # null removes a field the server rejects


async def test_anthropic_gets_the_same_settings_in_its_own_words(server):
    settings = ModelSettings.model_validate({"provider": "anthropic", "baseUrl": server.url, "top_p": 0.9,
                                             "stop": ["END"], "extraBody": {"metadata": {"user_id": "u1"}}})
    resolved = create_provider(settings, model_environment({"ANTHROPIC_API_KEY": "sk-ant-test-000000000000"}))
    try:
        body = await _ask(resolved, server)
    finally:
        await resolved.provider.aclose()
    assert body["top_p"] == 0.9 and body["stop_sequences"] == ["END"] and body["metadata"] == {"user_id": "u1"}


async def test_a_max_tokens_is_sent_when_none_is_configured(server, local):
    body = await _ask(local(), server)
    assert body["max_tokens"] == 4096  # unknown model, server says nothing about its window
    body = await _ask(local(maxOutputTokens=1000), server)
    assert body["max_tokens"] == 1000


# Each server kind answers its own question; the others get a 404, as from a real server of that kind.
KINDS = {
    "vLLM": ("GET /v1/models", {"object": "list", "data": [
        {"id": "other", "max_model_len": 4096}, {"id": "local-coder:7b", "max_model_len": 32768}]}, 32768),
    "llama.cpp": ("GET /props", {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}, 8192),
    "Ollama num_ctx": ("POST /api/show", {"parameters": "stop \"<|im_end|>\"\nnum_ctx 16384",
                                           "model_info": {"qwen2.context_length": 32768}}, 16384),
    "Ollama model_info": ("POST /api/show", {"parameters": "", "model_info": {"qwen2.context_length": 32768}}, 32768),
    "LM Studio": ("GET /api/v0/models/local-coder%3A7b",
                  {"id": "local-coder:7b", "max_context_length": 32768, "loaded_context_length": 12000}, 12000),
}


@pytest.mark.parametrize("kind", KINDS)
async def test_the_context_window_is_asked_of_the_server(server, local, kind):
    route, answer, window = KINDS[kind]
    server.routes[route] = Reply.json(200, answer)
    resolved = local()
    assert resolved.provider.model_info(resolved.model).context_window is None  # not known by name
    body = await _ask(resolved, server)
    assert resolved.provider.model_info(resolved.model).context_window == window
    assert body["max_tokens"] == min(4096, window // 4)  # room left for the prompt
    if kind == "Ollama num_ctx":
        assert server.probes[-1].body == {"model": "local-coder:7b"}
    await _ask(resolved, server)
    asked = len(server.probes)
    await _ask(resolved, server)
    assert len(server.probes) == asked  # asked once per model, not per request


async def test_the_server_s_window_wins_over_the_model_s_own(server):
    """qwen2.5-coder can take 32k tokens, but Ollama runs it with what num_ctx says."""
    server.routes["POST /api/show"] = Reply.json(200, {"parameters": "num_ctx 4096"})
    resolved = create_provider(ModelSettings(), model_environment({"OPENAI_BASE_URL": server.url + "/v1",
                                                                   "AGENT_LSP_MODEL": "qwen2.5-coder:14b"}))
    try:
        assert resolved.provider.model_info(resolved.model).context_window == 32768
        body = await _ask(resolved, server)
        assert resolved.provider.model_info(resolved.model).context_window == 4096
        assert body["max_tokens"] == 1024  # the model could write 8192: not in a 4096 window
    finally:
        await resolved.provider.aclose()


async def test_a_configured_window_is_not_asked(server, local):
    server.routes["GET /props"] = Reply.json(200, {"default_generation_settings": {"n_ctx": 8192}})
    resolved = local(contextWindow=20000)
    await _ask(resolved, server)
    assert server.probes == []
    assert resolved.provider.model_info(resolved.model).context_window == 20000
    assert json.dumps(server.requests[-1].body)  # the request itself went out


async def test_a_slow_server_holds_the_first_request_a_moment_only_and_the_next_knows(server, local):
    """The window is asked in the background; a request waits for the answer a
    moment (about 200 ms), then goes with what is known, and the next one knows."""
    server.routes["GET /props"] = Reply(parts=[b'{"default_generation_settings": ', b'{"n_ctx": 4096}}'],
                                        headers={"content-type": "application/json"}, delay_s=1.0)
    resolved = local()
    probe = resolved.provider.discover_soon(resolved.model)  # as a session's start does
    assert probe is not None
    first = await _ask(resolved, server)
    assert first["max_tokens"] == 4096 and not probe.done()  # not held for the whole probe
    await probe
    second = await _ask(resolved, server)
    assert second["max_tokens"] == 1024  # a quarter of the window the server said
    assert [p.path for p in server.probes].count("/props") == 1
