"""Settings + env vars -> which provider, model and endpoint; keys never shown."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from agent_lsp.config.environment import model_environment
from agent_lsp.llm.anthropic import AnthropicProvider
from agent_lsp.llm.factory import create_provider
from agent_lsp.llm.models import model_info
from agent_lsp.llm.openai import OpenAIProvider
from agent_lsp.llm.settings import ModelSettings
from agent_lsp.llm.types import LlmError, ModelRequest
from llm_fake_server import Reply

ANTHROPIC_KEY = "sk-ant-api03-zzzzzzzzzzzzzzzzzzzzzzzz"
OPENAI_KEY = "sk-proj-yyyyyyyyyyyyyyyyyyyyyyyy"


def test_auto_prefers_anthropic_then_openai_then_scripted():
    both = create_provider(ModelSettings(), model_environment({"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}))
    assert both.provider_name == "anthropic" and isinstance(both.provider, AnthropicProvider)
    assert both.model == "claude-sonnet-4-5" and both.info.context_window == 200_000
    assert "ANTHROPIC_API_KEY is set" in both.description

    openai = create_provider(ModelSettings(), model_environment({"OPENAI_API_KEY": OPENAI_KEY}))
    assert openai.provider_name == "openai" and isinstance(openai.provider, OpenAIProvider)

    demo = create_provider(ModelSettings(), model_environment({}))
    assert demo.provider_name == "scripted" and "scripted" in demo.description


def test_local_server_without_key_is_openai_compatible():
    resolved = create_provider(ModelSettings(), model_environment({"OPENAI_BASE_URL": "http://localhost:11434/v1", "AGENT_LSP_MODEL": "qwen3:8b"}))
    assert resolved.provider_name == "openai" and resolved.model == "qwen3:8b"
    assert resolved.provider.base_url == "http://localhost:11434/v1"


def test_settings_win_over_env():
    settings = ModelSettings.model_validate(
        {"provider": "openai", "model": "gpt-4o", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "sk-from-settings-123456", "contextWindow": 64000}
    )
    resolved = create_provider(settings, model_environment({"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "AGENT_LSP_MODEL": "other"}))
    assert (resolved.provider_name, resolved.model, resolved.provider.base_url) == ("openai", "gpt-4o", "http://127.0.0.1:9/v1")
    assert resolved.info.context_window == 64000 and resolved.info.max_output_tokens == 16_384
    assert "model.apiKey setting" in resolved.description


def test_agent_lsp_env_vars():
    env = {"AGENT_LSP_PROVIDER": "anthropic", "AGENT_LSP_API_KEY": "k-generic-123456", "AGENT_LSP_BASE_URL": "http://127.0.0.1:8080"}
    resolved = create_provider(ModelSettings(), model_environment(env))
    assert resolved.provider_name == "anthropic" and resolved.provider.base_url == "http://127.0.0.1:8080"
    assert "AGENT_LSP_API_KEY" in resolved.description
    with pytest.raises(ValueError, match="AGENT_LSP_PROVIDER"):
        create_provider(ModelSettings(), model_environment({"AGENT_LSP_PROVIDER": "gemini"}))


def test_keys_never_appear_in_description_repr_log_or_settings_dump(caplog):
    caplog.set_level(logging.INFO)
    settings = ModelSettings.model_validate({"apiKey": OPENAI_KEY, "provider": "openai"})
    env = model_environment({"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "AGENT_LSP_API_KEY": OPENAI_KEY})
    resolved = create_provider(settings, env)
    shown = " ".join([resolved.description, repr(resolved), repr(settings), repr(env), settings.model_dump_json(by_alias=True), caplog.text])
    assert OPENAI_KEY not in shown and ANTHROPIC_KEY not in shown
    assert "openai" in caplog.text


def test_scripted_provider_uses_the_script():
    resolved = create_provider(ModelSettings.model_validate({"provider": "scripted", "script": [{"text": "hi"}]}), model_environment({}))
    assert resolved.provider_name == "scripted" and resolved.provider.script == [{"text": "hi"}]


def test_fallback_model():
    settings = ModelSettings.model_validate({"provider": "anthropic", "fallback": {"model": "claude-haiku-4-5"}})
    resolved = create_provider(settings, model_environment({"ANTHROPIC_API_KEY": ANTHROPIC_KEY}))
    assert resolved.fallback is not None
    assert resolved.fallback.model == "claude-haiku-4-5" and resolved.fallback.provider_name == "anthropic-fallback"
    assert resolved.fallback.provider.name == "anthropic-fallback"

    cross = create_provider(
        ModelSettings.model_validate({"provider": "anthropic", "fallback": {"provider": "openai"}}),
        model_environment({"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}),
    )
    assert (cross.fallback.provider_name, cross.fallback.model) == ("openai", "gpt-4.1")


def test_settings_use_camel_case_and_reject_unknown_keys():
    s = ModelSettings.model_validate({"maxOutputTokens": 100, "timeouts": {"firstByte": 5, "idle": 7}})
    assert s.max_output_tokens == 100 and s.timeouts.first_byte == 5 and s.timeouts.idle == 7
    with pytest.raises(ValidationError):
        ModelSettings.model_validate({"provider": "gemini"})
    with pytest.raises(ValidationError):
        ModelSettings.model_validate({"apikey": "x"})


def test_known_models_and_overrides():
    assert model_info("claude-sonnet-4-5-20250929").context_window == 200_000
    assert model_info("openai/gpt-4o-mini").max_output_tokens == 16_384
    assert model_info("gpt-4.1-nano-2025-04-14").context_window == 1_047_576
    assert model_info("my-local-model").context_window is None
    assert model_info("gpt-4o", context_window=1000).context_window == 1000


async def test_auth_failure_names_the_env_var_to_fix(server):
    resolved = create_provider(ModelSettings.model_validate({"baseUrl": server.url + "/v1", "provider": "openai"}), model_environment({}))
    server.queue(Reply.json(401, {"error": {"message": "Missing bearer token", "type": "invalid_request_error"}}))
    request = ModelRequest(provider="openai", model=resolved.model, system="", messages=())
    with pytest.raises(LlmError) as caught:
        async for _ in resolved.provider.stream(request):
            pass
    await resolved.provider.aclose()
    assert caught.value.code == "AUTH"
    assert "OPENAI_API_KEY" in caught.value.failure["message"]
