"""Errors that send a user to their configuration: each names the endpoint or
the model and the setting it came from; a local endpoint nobody listens on
fails at once instead of being retried."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from agent_lsp.config.environment import model_environment
from agent_lsp.llm.factory import create_provider
from agent_lsp.llm.settings import ModelSettings
from agent_lsp.llm.types import LlmError, ModelRequest
from llm_fake_server import Reply

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from cli_helpers import agent_lsp, clean_env  # noqa: E402


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the probe is


async def _failure(resolved) -> LlmError:
    request = ModelRequest(provider=resolved.provider_name, model=resolved.model, system="", messages=())
    try:
        with pytest.raises(LlmError) as caught:
            async for _ in resolved.provider.stream(request):
                pass
    finally:
        await resolved.provider.aclose()
    return caught.value


@pytest.mark.parametrize(("env", "source"), [
    ({"OPENAI_BASE_URL": "http://127.0.0.1:{port}/v1"}, "OPENAI_BASE_URL"),
    ({"AGENT_LSP_BASE_URL": "http://127.0.0.1:{port}/v1", "AGENT_LSP_PROVIDER": "openai"}, "AGENT_LSP_BASE_URL"),
    ({"ANTHROPIC_BASE_URL": "http://localhost:{port}"}, "ANTHROPIC_BASE_URL"),
])
async def test_a_refused_local_endpoint_names_the_url_and_setting_and_is_not_retryable(env, source):
    port = _closed_port()
    env = {k: v.format(port=port) for k, v in env.items()}
    resolved = create_provider(ModelSettings(), model_environment(env))
    error = await _failure(resolved)
    assert error.code == "NETWORK"
    assert error.failure.get("retryable") is False
    message = error.failure["message"]
    assert f":{port}/" in message and "is the model server running?" in message
    assert f"the endpoint comes from {source}" in message


async def test_unknown_model_names_the_setting_that_holds_it(server):
    server.queue(Reply.json(404, {"error": "model \"qwen-x\" not found, try pulling it first"}))
    resolved = create_provider(ModelSettings(), model_environment({"OPENAI_BASE_URL": server.url + "/v1", "AGENT_LSP_MODEL": "qwen-x"}))
    error = await _failure(resolved)
    assert error.code == "MODEL_UNAVAILABLE"
    assert error.failure["message"] == (
        "model \"qwen-x\" not found, try pulling it first (the model name 'qwen-x' comes from AGENT_LSP_MODEL)")

    server.queue(Reply.json(404, {"error": {"message": "The model `gpt-5.9` does not exist", "code": "model_not_found"}}))
    settings = ModelSettings.model_validate({"provider": "openai", "model": "gpt-5.9", "baseUrl": server.url + "/v1"})
    error = await _failure(create_provider(settings, model_environment({})))
    assert "the model name 'gpt-5.9' comes from the model.model setting" in error.failure["message"]


def test_run_against_a_local_endpoint_that_is_down_is_not_retried(tmp_path: Path):
    env = clean_env(tmp_path, OPENAI_BASE_URL=f"http://127.0.0.1:{_closed_port()}/v1")
    done = agent_lsp(["run", "hello", "-w", str(tmp_path)], env)
    assert done.returncode == 1
    assert "retrying" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "cannot connect" in line]
    assert "OPENAI_BASE_URL" in line


def test_run_with_an_unknown_model_asks_once(tmp_path: Path):
    import asyncio

    from llm_fake_server import FakeServer

    async def scenario() -> tuple[str, int]:
        fake = FakeServer()
        await fake.start()
        for _ in range(3):
            fake.queue(Reply.json(404, {"error": {"message": "model 'qwen-x' not found", "type": "not_found_error"}}))
        env = clean_env(tmp_path, OPENAI_BASE_URL=fake.url + "/v1", AGENT_LSP_MODEL="qwen-x")
        done = await asyncio.to_thread(agent_lsp, ["run", "hello", "-w", str(tmp_path)], env)
        await fake.stop()
        return done.stderr, len(fake.requests)

    stderr, requests = asyncio.run(scenario())
    assert requests == 1  # not retried
    assert "comes from AGENT_LSP_MODEL" in stderr and "retrying" not in stderr
