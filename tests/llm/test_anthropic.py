"""Anthropic Messages provider against a real local HTTP server replaying recordings."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from agent_lsp.llm.anthropic import AnthropicProvider
from agent_lsp.llm.transport import Timeouts
from agent_lsp.llm.types import LlmError, ModelRequest
from llm_fake_server import Reply, recording

KEY = "sk-ant-api03-secretsecretsecretsecret"


def request(**kw) -> ModelRequest:
    base = dict(
        provider="anthropic",
        model="claude-sonnet-4-5",
        system="You are terse.",
        messages=({"role": "user", "id": "m1", "source": "user", "content": [{"type": "text", "text": "hi"}]},),
    )
    base.update(kw)
    return ModelRequest(**base)


@pytest.fixture
async def provider(server):
    p = AnthropicProvider(
        base_url=server.url,
        api_key=KEY,
        timeouts=Timeouts(connect=2, first_byte=2, idle=2),
        auth_hint="check the API key in ANTHROPIC_API_KEY",
    )
    yield p
    await p.aclose()


async def collect(provider, req=None):
    chunks = []
    try:
        async for chunk in provider.stream(req or request()):
            chunks.append(chunk)
    except LlmError as exc:
        return chunks, exc
    return chunks, None


@pytest.mark.parametrize("end", [b"\n", b"\r\n"], ids=["lf", "crlf"])
async def test_text_stream_with_ping_and_cache_read_usage(server, provider, end):
    server.queue(Reply.sse(recording("anthropic_text.sse").replace(b"\n", end)))
    chunks, error = await collect(provider)
    assert error is None
    assert chunks == [
        {"type": "text-start"},
        {"type": "text-delta", "text": "Bonjour, "},
        {"type": "text-delta", "text": "ça va ? ✓"},
        {"type": "text-end"},
        # input = uncached + cache writes + cache reads; the message_delta usage overwrites.
        {"type": "usage", "usage": {"inputTokens": 2073, "outputTokens": 12, "cacheReadTokens": 2048, "cacheWriteTokens": 0}},
        {"type": "finish", "kind": "stop"},
    ]


async def test_thinking_signature_text_and_tool_use(server, provider):
    server.queue(Reply.sse(recording("anthropic_thinking_tool.sse")))
    chunks, error = await collect(provider)
    assert error is None
    assert [c["type"] for c in chunks] == [
        "reasoning-start", "reasoning-delta", "reasoning-delta", "reasoning-end",
        "text-start", "text-delta", "text-end",
        "tool-call-start", "tool-call-delta", "tool-call-delta", "tool-call-end",
        "usage", "finish",
    ]
    assert chunks[3] == {"type": "reasoning-end", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}
    assert chunks[7] == {"type": "tool-call-start", "id": "toolu_01KFbKqPYSuAKujiL6mTfzYA", "name": "get_weather"}
    args = "".join(c["delta"] for c in chunks if c["type"] == "tool-call-delta")
    assert json.loads(args) == {"city": "Paris"}
    assert chunks[-2]["usage"] == {"inputTokens": 2349, "outputTokens": 47, "cacheReadTokens": 0, "cacheWriteTokens": 1500}
    assert chunks[-1] == {"type": "finish", "kind": "tool-calls"}


async def test_request_shape_tool_results_thinking_and_cache_breakpoints(server, provider):
    server.queue(Reply.sse(recording("anthropic_text.sse")))
    history = (
        {"role": "user", "id": "m1", "source": "user", "content": [{"type": "text", "text": "weather in Paris and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "Two calls.", "signature": "sig-1"},
                {"type": "text", "text": "Checking."},
                {"type": "tool-call", "id": "toolu_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
                {"type": "tool-call", "id": "toolu_2", "name": "get_weather", "arguments": '{"city":"Rome"}'},
            ],
        },
        {"role": "tool", "callId": "toolu_1", "name": "get_weather", "content": [{"type": "text", "text": "18C"}], "isError": False},
        {"role": "user", "id": "m2", "source": "user", "content": [{"type": "text", "text": "in Celsius please"}]},
        {"role": "tool", "callId": "toolu_2", "name": "get_weather", "content": [{"type": "text", "text": "no data"}], "isError": True},
    )
    tools = (
        {"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}},
        {"name": "read_file", "description": "Read", "parameters": {"type": "object"}},
    )
    await collect(provider, request(messages=history, tools=tools, max_tokens=500, stop=("END",)))
    seen = server.requests[0]
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == KEY and seen.headers["anthropic-version"] == "2023-06-01"
    body = seen.body
    assert body["max_tokens"] == 500 and body["stop_sequences"] == ["END"] and body["stream"] is True
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    assert body["tools"][0] == {"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "Two calls.", "signature": "sig-1"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    last = messages[2]["content"]
    # Every tool_result first, then the user's text, in one user turn.
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert last[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}
    assert last[1]["is_error"] is True and last[1]["tool_use_id"] == "toolu_2"
    # At most 4 breakpoints: system, tools, the two newest user turns.
    assert json.dumps(body).count("cache_control") == 4
    assert last[-1]["cache_control"] == {"type": "ephemeral"}
    assert messages[0]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_default_max_tokens_comes_from_the_model(server, provider):
    server.queue(Reply.sse(recording("anthropic_text.sse")))
    await collect(provider)
    assert server.requests[0].body["max_tokens"] == 16_384


async def test_error_event_inside_the_stream_is_overloaded(server, provider):
    server.queue(Reply.sse(recording("anthropic_error_event.sse")))
    chunks, error = await collect(provider)
    assert {"type": "text-delta", "text": "Partial"} in chunks
    assert error.code == "OVERLOADED" and error.failure["message"] == "Overloaded"


async def test_truncated_stream_is_network(server, provider):
    server.queue(Reply.sse(recording("anthropic_truncated.sse")))
    _, error = await collect(provider)
    assert error.code == "NETWORK" and "message_stop" in error.failure["message"]


async def test_529_overloaded_with_retry_after(server, provider):
    server.queue(
        Reply.json(
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"},
            {"retry-after": "3"},
        )
    )
    _, error = await collect(provider)
    assert error.failure == {
        "code": "OVERLOADED",
        "status": 529,
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "message": "Overloaded",
        "providerRetryAfterMs": 3000,
        "requestId": "req_011CSHoEeqs5C35K2UUqR7Fy",
        "url": server.url,  # the endpoint asked
    }


async def test_429_uses_the_request_id_header(server, provider):
    server.queue(
        Reply.json(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}},
            {"retry-after-ms": "1500", "request-id": "req_hdr"},
        )
    )
    _, error = await collect(provider)
    assert (error.code, error.failure["providerRetryAfterMs"], error.failure["requestId"]) == ("RATE_LIMIT", 1500, "req_hdr")


async def test_prompt_too_long_is_context_window_exceeded(server, provider):
    server.queue(
        Reply.json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 213462 tokens > 200000 maximum"}})
    )
    _, error = await collect(provider)
    assert error.code == "CONTEXT_WINDOW_EXCEEDED"


async def test_401_names_what_to_fix(server, provider):
    server.queue(Reply.json(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}))
    _, error = await collect(provider)
    assert error.code == "AUTH"
    assert error.failure["message"] == "invalid x-api-key (check the API key in ANTHROPIC_API_KEY)"


async def test_500_and_reset(server, provider):
    server.queue(
        Reply.json(500, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}),
        Reply(parts=[recording("anthropic_text.sse")[:400]], end="reset"),
    )
    _, error = await collect(provider)
    assert error.code == "SERVER"
    _, error = await collect(provider)
    assert error.code == "NETWORK"


async def test_stall_is_timeout_and_cancel_hangs_up(server):
    provider = AnthropicProvider(base_url=server.url, timeouts=Timeouts(connect=2, first_byte=2, idle=0.2))
    server.queue(Reply(parts=[recording("anthropic_text.sse")[:600]], end="stall"))
    _, error = await collect(provider)
    assert error.code == "TIMEOUT"

    server.hangup.clear()
    server.stall_started.clear()
    server.queue(Reply(parts=[recording("anthropic_text.sse")[:600]], end="stall"))
    slow = AnthropicProvider(base_url=server.url, timeouts=Timeouts(connect=2, first_byte=2, idle=30))
    stream = slow.stream(request())
    assert await anext(stream) == {"type": "text-start"}
    await asyncio.wait_for(server.stall_started.wait(), 2)
    closed_at = time.monotonic()
    await stream.aclose()
    await asyncio.wait_for(server.hangup.wait(), 1)
    assert server.hangups[-1] - closed_at < 0.5
    await provider.aclose()
    await slow.aclose()


async def test_base_url_with_v1_suffix(server):
    provider = AnthropicProvider(base_url=server.url + "/v1/", api_key=KEY)
    server.queue(Reply.sse(recording("anthropic_text.sse")))
    _, error = await collect(provider)
    await provider.aclose()
    assert error is None and server.requests[0].path == "/v1/messages"


async def test_configured_max_output_and_extra_headers(server):
    provider = AnthropicProvider(base_url=server.url, max_output_tokens=32_000, headers={"anthropic-beta": "context-1m-2025-08-07"})
    server.queue(Reply.sse(recording("anthropic_text.sse")))
    _, error = await collect(provider)
    await provider.aclose()
    seen = server.requests[0]
    assert error is None and seen.body["max_tokens"] == 32_000
    assert seen.headers["anthropic-beta"] == "context-1m-2025-08-07"
    assert "x-api-key" not in seen.headers  # no key configured (a local server)
