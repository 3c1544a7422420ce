"""Only a model server's base URL set, no model name, seen through `agent-lsp
run` and the real server against a local HTTP server that lists its models
as llama.cpp, LM Studio and Ollama do (`GET /v1/models`): one model listed is
the one used, from the first request on, and the session records the switch
as a model choice; several listed are named in the error, with how to choose
one, and nothing is sent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from cli_helpers import agent_lsp, clean_env

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from llm_fake_server import FakeServer, Reply  # noqa: E402


def _listing(*ids: str) -> dict[str, Reply]:
    return {"GET /v1/models": Reply.json(200, {"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})}


def _run(tmp_path: Path, routes: dict[str, Reply], replies: list[Reply], **env: str):
    async def scenario():
        fake = FakeServer()
        await fake.start()
        fake.queue(*replies)
        fake.routes.update(routes)
        environment = clean_env(tmp_path, OPENAI_BASE_URL=fake.url + "/v1",
                                AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"), **env)
        done = await asyncio.to_thread(agent_lsp, ["run", "hello", "-w", str(tmp_path)], environment)
        await fake.stop()
        return done, fake

    return asyncio.run(scenario())


def _events(tmp_path: Path) -> list[dict]:
    (log,) = (tmp_path / "sessions").glob("*/*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()[1:]]


def test_the_one_model_the_endpoint_lists_is_used_when_no_model_name_is_set(tmp_path: Path):
    done, fake = _run(tmp_path, _listing("qwen2.5-coder-7b-instruct-q4_k_m.gguf"), [Reply.openai_text("hi there")])
    assert done.returncode == 0, done.stderr
    assert "hi there" in done.stdout
    assert [r.body["model"] for r in fake.requests] == ["qwen2.5-coder-7b-instruct-q4_k_m.gguf"]
    (switch,) = [e["data"] for e in _events(tmp_path) if e["type"] == "session/model"]
    assert switch["model"] == "qwen2.5-coder-7b-instruct-q4_k_m.gguf" and switch["previousModel"] == "gpt-4.1"


def test_several_models_and_no_name_set_are_named_with_how_to_choose(tmp_path: Path):
    done, fake = _run(tmp_path, _listing("llama3.2:3b", "qwen2.5-coder:7b"), [Reply.openai_text("never")])
    assert done.returncode != 0
    assert fake.requests == []  # nothing sent with a name the server does not have
    assert "llama3.2:3b, qwen2.5-coder:7b" in done.stderr
    assert "model.model setting" in done.stderr and "AGENT_LSP_MODEL" in done.stderr


def test_a_model_name_that_is_set_is_kept(tmp_path: Path):
    done, fake = _run(tmp_path, _listing("only-one"), [Reply.openai_text("fine")], AGENT_LSP_MODEL="my-model")
    assert done.returncode == 0, done.stderr
    assert [r.body["model"] for r in fake.requests] == ["my-model"]
    assert not [e for e in _events(tmp_path) if e["type"] == "session/model"]


def test_an_endpoint_with_a_key_answers_for_itself_when_it_lists_several(tmp_path: Path):
    done, fake = _run(tmp_path, _listing("gpt-4.1-mini", "o4-mini"), [Reply.openai_text("fine")],
                      OPENAI_API_KEY="sk-test-1234567890")
    assert done.returncode == 0, done.stderr
    assert [r.body["model"] for r in fake.requests] == ["gpt-4.1"]  # a service may take names it does not list
