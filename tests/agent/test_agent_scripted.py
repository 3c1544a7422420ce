"""The scripted provider's script format (used by tests, the demo and the LSP tests)."""

from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.llm.types import LlmError, ModelRequest

import pytest


def request(text="hi"):
    return ModelRequest(provider="scripted", model="m", system="",
                        messages=({"role": "user", "content": [{"type": "text", "text": text}]},))


async def collect(provider, req=None):
    return [c async for c in provider.stream(req or request())]


async def test_text_reply_chunks():
    chunks = await collect(ScriptedProvider([{"text": "abc"}]))
    assert [c["type"] for c in chunks] == ["text-start", "text-delta", "text-delta", "text-delta", "text-end",
                                           "usage", "finish"]
    assert chunks[-1]["kind"] == "stop"


async def test_tools_and_reasoning():
    chunks = await collect(ScriptedProvider([{"reasoning": "r", "tools": [{"name": "t", "arguments": {"a": 1}, "id": "x"}]}]))
    types = [c["type"] for c in chunks]
    assert types == ["reasoning-start", "reasoning-delta", "reasoning-end", "tool-call-start", "tool-call-delta",
                     "tool-call-end", "usage", "finish"]
    assert chunks[4]["delta"] == '{"a": 1}' and chunks[-1]["kind"] == "tool-calls"


async def test_failures_thrown_and_inband():
    with pytest.raises(LlmError) as info:
        await collect(ScriptedProvider([{"fail": "RATE_LIMIT", "retryAfterMs": 5}]))
    assert info.value.code == "RATE_LIMIT" and info.value.failure["providerRetryAfterMs"] == 5
    chunks = await collect(ScriptedProvider([{"inband": "CONTEXT_WINDOW_EXCEEDED"}]))
    assert chunks[-1] == {"type": "finish", "kind": "error",
                          "failure": {"code": "CONTEXT_WINDOW_EXCEEDED", "message": "scripted CONTEXT_WINDOW_EXCEEDED"}}


async def test_max_tokens_and_exhausted_script_echoes():
    provider = ScriptedProvider([{"maxTokens": "cut"}])
    assert (await collect(provider))[-1]["kind"] == "max-tokens"
    chunks = await collect(provider, request("what now"))
    text = "".join(c.get("text", "") for c in chunks if c["type"] == "text-delta")
    assert text == "(scripted model) You said: what now"
    assert len(provider.requests) == 2


async def test_callable_reply_and_usage_override():
    provider = ScriptedProvider([lambda req: {"text": req.model, "usage": {"inputTokens": 1, "outputTokens": 2}}])
    chunks = await collect(provider)
    assert [c for c in chunks if c["type"] == "usage"][0]["usage"] == {"inputTokens": 1, "outputTokens": 2}
