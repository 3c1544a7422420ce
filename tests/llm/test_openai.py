"""OpenAI-compatible provider against a real local HTTP server replaying recordings."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from agent_lsp.llm.openai import OpenAIProvider
from agent_lsp.llm.transport import Timeouts
from agent_lsp.llm.types import LlmError, ModelRequest
from llm_fake_server import Reply, recording

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123"


def request(**kw) -> ModelRequest:
    base = dict(
        provider="openai",
        model="gpt-4.1-nano",
        system="You are terse.",
        messages=({"role": "user", "id": "m1", "source": "user", "content": [{"type": "text", "text": "hi"}]},),
    )
    base.update(kw)
    return ModelRequest(**base)


@pytest.fixture
async def provider(server):
    p = OpenAIProvider(
        base_url=server.url + "/v1",
        api_key=KEY,
        timeouts=Timeouts(connect=2, first_byte=2, idle=2),
        auth_hint="check the API key in OPENAI_API_KEY",
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


def tool_calls(chunks):
    """id -> (name, joined argument text), in start order."""
    calls = {}
    for c in chunks:
        if c["type"] == "tool-call-start":
            calls[c["id"]] = [c["name"], ""]
        elif c["type"] == "tool-call-delta":
            calls[c["id"]][1] += c["delta"]
    return {k: tuple(v) for k, v in calls.items()}


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
async def test_text_stream_cut_at_awkward_boundaries(server, provider, end):
    server.queue(Reply.sse(recording("openai_text.sse").replace(b"\n", end)))
    chunks, error = await collect(provider)
    assert error is None
    assert chunks == [
        {"type": "text-start"},
        {"type": "text-delta", "text": "Héllo"},
        {"type": "text-delta", "text": ", 世界"},
        {"type": "text-delta", "text": " 🌍!"},
        {"type": "text-end"},
        {"type": "usage", "usage": {"inputTokens": 19, "outputTokens": 6, "cacheReadTokens": 0, "reasoningTokens": 0}},
        {"type": "finish", "kind": "stop"},
    ]


async def test_request_shape(server, provider):
    server.queue(Reply.sse(recording("openai_text.sse")))
    history = (
        {"role": "user", "id": "m1", "source": "user", "content": [{"type": "text", "text": "weather?"}]},
        {
            "role": "assistant",
            "provider": "openai",
            "model": "gpt-4.1-nano",
            "content": [
                {"type": "reasoning", "text": "thinking"},
                {"type": "tool-call", "id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
            ],
        },
        {"role": "tool", "callId": "call_1", "name": "get_weather", "content": [{"type": "text", "text": "18C"}], "isError": False},
        {"role": "assistant", "content": []},  # content-less: not sent
    )
    tools = ({"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},)
    await collect(provider, request(messages=history, tools=tools, max_tokens=100, temperature=0.2, stop=("END",)))
    seen = server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    body = seen.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": "",  # never null: some servers reject it
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
    ]
    assert body["tools"] == [{"type": "function", "function": tools[0]}]
    # A local server gets the widely supported `max_tokens`.
    assert body["max_tokens"] == 100 and body["temperature"] == 0.2 and body["stop"] == ["END"]


async def test_parallel_tool_calls_with_interleaved_fragments_and_cached_usage(server, provider):
    server.queue(Reply.sse(recording("openai_tools_parallel.sse")))
    chunks, error = await collect(provider)
    assert error is None
    assert tool_calls(chunks) == {
        "call_PieqNSej6kM9hgYbcQdbZSaC": ("get_weather", '{"location": "Tokyo"}'),
        "call_Zk2b9Vq1xYhT0m8RrLcW4pDe": ("get_time", '{"tz": "Asia/Tokyo"}'),
    }
    ends = [c["id"] for c in chunks if c["type"] == "tool-call-end"]
    assert ends == ["call_PieqNSej6kM9hgYbcQdbZSaC", "call_Zk2b9Vq1xYhT0m8RrLcW4pDe"]
    assert chunks[-2] == {
        "type": "usage",
        "usage": {"inputTokens": 1067, "outputTokens": 31, "cacheReadTokens": 1024, "reasoningTokens": 12},
    }
    assert chunks[-1] == {"type": "finish", "kind": "tool-calls"}


async def test_reasoning_content_then_text(server, provider):
    server.queue(Reply.sse(recording("openai_reasoning.sse")))
    chunks, error = await collect(provider)
    assert error is None
    assert [c["type"] for c in chunks] == [
        "reasoning-start", "reasoning-delta", "reasoning-delta", "reasoning-end",
        "text-start", "text-delta", "text-delta", "text-end", "usage", "finish",
    ]
    assert "".join(c.get("text", "") for c in chunks if c["type"] == "reasoning-delta") == "The user wants a greeting."
    assert chunks[-2]["usage"]["reasoningTokens"] == 14
    assert chunks[-1] == {"type": "finish", "kind": "stop"}


async def test_ollama_whole_calls_at_index_zero_are_two_calls(server, provider):
    server.queue(Reply.sse(recording("ollama_whole_calls.sse")))
    chunks, error = await collect(provider)
    assert error is None
    assert tool_calls(chunks) == {
        "call_x1fq0kxe": ("read_file", '{"path":"src/app.py"}'),
        "call_0d8tmm2q": ("read_file", '{"path":"README.md"}'),
    }
    assert chunks[-1] == {"type": "finish", "kind": "tool-calls"}


async def test_llama_cpp_repeated_id_and_name_are_not_concatenated(server, provider):
    server.queue(Reply.sse(recording("llamacpp_repeated_name.sse")))
    chunks, error = await collect(provider)
    assert error is None
    assert tool_calls(chunks) == {"call__0_read_file_cmpl-5e2b": ("read_file", '{"path": "mañana.py"}')}
    assert not any(c["type"] == "usage" for c in chunks)  # this server sends none
    assert chunks[-1] == {"type": "finish", "kind": "tool-calls"}


# --- failures ----------------------------------------------------------------------------


async def test_429_with_retry_after_is_rate_limit(server, provider):
    server.queue(
        Reply.json(
            429,
            {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}},
            {"retry-after": "2", "x-request-id": "req_abc"},
        )
    )
    _, error = await collect(provider)
    assert error.failure["code"] == "RATE_LIMIT"
    assert error.failure["providerRetryAfterMs"] == 2000
    assert error.failure["requestId"] == "req_abc"
    assert error.failure["status"] == 429
    assert "Rate limit reached" in error.failure["message"]


async def test_429_insufficient_quota_is_quota(server, provider):
    server.queue(
        Reply.json(429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}})
    )
    _, error = await collect(provider)
    assert error.code == "QUOTA"


@pytest.mark.parametrize(
    "status,body,code",
    [
        (500, {"error": {"message": "boom", "type": "server_error"}}, "SERVER"),
        (503, {"error": {"message": "unavailable"}}, "SERVICE_UNAVAILABLE"),
        (404, {"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}, "MODEL_UNAVAILABLE"),
        (
            400,
            {"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}},
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (  # vLLM
            400,
            {"error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).", "type": "BadRequestError", "param": None, "code": 400}},
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (  # llama.cpp
            400,
            {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}},
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (400, {"error": {"message": "Invalid schema for function", "type": "invalid_request_error"}}, "BAD_REQUEST"),
    ],
)
async def test_http_errors_are_classified(server, provider, status, body, code):
    server.queue(Reply.json(status, body))
    _, error = await collect(provider)
    assert error.code == code
    assert error.failure["message"] == body["error"]["message"]


async def test_401_names_what_to_fix_and_never_the_key(server, provider):
    server.queue(
        Reply.json(401, {"error": {"message": f"Incorrect API key provided: {KEY}. You can find your API key at …", "type": "invalid_request_error", "code": "invalid_api_key"}})
    )
    _, error = await collect(provider)
    assert error.code == "AUTH"
    assert "OPENAI_API_KEY" in error.failure["message"]
    assert KEY not in str(error.failure) and KEY[8:20] not in str(error.failure)
    assert "provided: ." not in error.failure["message"]  # the masked key leaves readable text


async def test_error_event_inside_the_stream(server, provider):
    server.queue(Reply.sse(recording("openai_error_event.sse")))
    chunks, error = await collect(provider)
    assert chunks[:2] == [{"type": "text-start"}, {"type": "text-delta", "text": "Let me"}]
    assert error.code == "SERVER"
    assert "Sorry about that" in error.failure["message"]


async def test_malformed_json_event(server, provider):
    server.queue(Reply.sse(recording("openai_malformed.sse")))
    _, error = await collect(provider)
    assert error.code == "SERVER" and "malformed JSON" in error.failure["message"]


async def test_stream_without_done_is_network(server, provider):
    server.queue(Reply.sse(recording("openai_truncated.sse")))
    chunks, error = await collect(provider)
    assert "".join(c.get("text", "") for c in chunks) == "This answer is cut off"
    assert error.code == "NETWORK"
    assert not any(c["type"] == "finish" for c in chunks)


async def test_connection_reset_mid_stream_is_network(server, provider):
    data = recording("openai_text.sse")
    server.queue(Reply(parts=[data[:700]], end="reset"))
    _, error = await collect(provider)
    assert error.code == "NETWORK"


async def test_body_cut_without_final_chunk_is_network(server, provider):
    data = recording("openai_text.sse")
    server.queue(Reply(parts=[data[:700]], end="close"))
    _, error = await collect(provider)
    assert error.code == "NETWORK"


async def test_stall_past_idle_timeout_is_timeout(server):
    provider = OpenAIProvider(base_url=server.url + "/v1", timeouts=Timeouts(connect=2, first_byte=2, idle=0.2))
    data = recording("openai_text.sse")
    server.queue(Reply(parts=[data[:700]], end="stall"))
    started = time.monotonic()
    _, error = await collect(provider)
    await provider.aclose()
    assert error.code == "TIMEOUT" and "stalled" in error.failure["message"]
    assert time.monotonic() - started < 1.5


async def test_no_first_byte_is_timeout(server):
    provider = OpenAIProvider(base_url=server.url + "/v1", timeouts=Timeouts(connect=2, first_byte=0.2, idle=5))
    server.queue(Reply(parts=[], end="stall"))
    _, error = await collect(provider)
    await provider.aclose()
    assert error.code == "TIMEOUT"


async def test_connection_refused_is_network():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{port}/v1", timeouts=Timeouts(connect=1, first_byte=1, idle=1))
    _, error = await collect(provider)
    await provider.aclose()
    assert error.code == "NETWORK"


def _sse(*payloads) -> bytes:
    return b"".join(b"data: " + (p if isinstance(p, bytes) else json.dumps(p).encode()) + b"\n\n" for p in payloads)


async def test_content_less_stop_is_empty_response(server, provider):
    server.queue(
        Reply.sse(_sse({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
                       {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, b"[DONE]"))
    )
    _, error = await collect(provider)
    assert error.code == "EMPTY_RESPONSE"


async def test_content_filter_and_length_finishes(server, provider):
    server.queue(
        Reply.sse(_sse({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "content_filter"}]}, b"[DONE]")),
        Reply.sse(_sse({"choices": [{"index": 0, "delta": {"content": "cut"}, "finish_reason": "length"}]}, b"[DONE]")),
    )
    _, error = await collect(provider)
    assert error.code == "CONTENT_FILTER"
    chunks, error = await collect(provider)
    assert error is None and chunks[-1] == {"type": "finish", "kind": "max-tokens"}


# --- cancellation ------------------------------------------------------------------------


async def test_cancel_closes_the_connection_at_once(server, provider):
    data = recording("openai_text.sse")
    server.queue(Reply(parts=[data[:700]], end="stall"))
    first = asyncio.Event()

    async def consume():
        async for _ in provider.stream(request()):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 2)
    await asyncio.wait_for(server.stall_started.wait(), 2)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.hangup.wait(), 1)
    assert server.hangups[-1] - cancelled_at < 0.5


async def test_connections_are_pooled_even_when_the_consumer_stops_at_finish(server, provider):
    server.queue(Reply.sse(recording("openai_text.sse"), awkward=False), Reply.sse(recording("openai_text.sse"), awkward=False))
    for _ in range(2):
        stream = provider.stream(request())
        async for chunk in stream:
            if chunk["type"] == "finish":
                break  # what the agent loop does
        await stream.aclose()
    assert len(server.requests) == 2 and server.hangups == []  # one kept-alive connection


async def test_whitespace_then_text_is_not_empty(server, provider):
    server.queue(
        Reply.sse(_sse({"choices": [{"index": 0, "delta": {"content": "\n"}, "finish_reason": None}]},
                       {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]},
                       {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, b"[DONE]"))
    )
    chunks, error = await collect(provider)
    assert error is None and chunks[-1] == {"type": "finish", "kind": "stop"}


async def test_empty_200_stream_is_network(server, provider):
    server.queue(Reply(parts=[]))  # llama-cpp-python's answer to a stream that overflows its context
    _, error = await collect(provider)
    assert error.code == "NETWORK" and "without sending anything" in error.failure["message"]


async def test_extra_body_adds_and_removes_keys(server, provider):
    server.queue(Reply.sse(recording("openai_text.sse")))
    await collect(provider, request(options={"extraBody": {"stream_options": None, "top_k": 20}}))
    body = server.requests[0].body
    assert "stream_options" not in body and body["top_k"] == 20


async def test_openai_host_gets_max_completion_tokens():
    from agent_lsp.llm.openai import build_request_body

    provider = OpenAIProvider(api_key="sk-x")
    assert provider.max_tokens_field == "max_completion_tokens"
    assert build_request_body(request(max_tokens=5), max_tokens_field="max_completion_tokens")["max_completion_tokens"] == 5
    await provider.aclose()


async def test_base_url_without_scheme_is_a_bad_request_not_a_retry():
    provider = OpenAIProvider(base_url="localhost:11434/v1")
    _, error = await collect(provider)
    await provider.aclose()
    assert error.code == "BAD_REQUEST" and "URL" in error.failure["message"]
