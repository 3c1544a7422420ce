"""Retry headers and error bodies -> the failure taxonomy."""

from __future__ import annotations

import json
from datetime import datetime
from email.utils import formatdate

import pytest

from agent_lsp.llm.failures import classify_http_error, classify_stream_error, redact, retry_after_ms

NOW = datetime.fromisoformat("2027-01-15T08:00:00+00:00").timestamp()


@pytest.mark.parametrize(
    "headers,expected",
    [
        ({"retry-after-ms": "250"}, 250),
        ({"Retry-After-Ms": "250.7", "retry-after": "9"}, 250),  # ms wins
        ({"retry-after": "2"}, 2000),
        ({"retry-after": "0.5"}, 500),
        ({"retry-after": formatdate(NOW + 30, usegmt=True)}, 30_000),
        ({"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-tokens": "1s", "x-ratelimit-remaining-tokens": "900"}, 360_000),
        ({"x-ratelimit-reset-tokens": "100ms"}, 100),
        ({"x-ratelimit-reset-tokens": "1h2m3.5s"}, 3_723_500),
        ({"anthropic-ratelimit-tokens-reset": "2027-01-15T08:00:10Z", "anthropic-ratelimit-tokens-remaining": "0"}, 10_000),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers, expected):
    assert retry_after_ms(headers, now=NOW) == expected


def test_exhausted_bucket_reset_wins_over_a_later_unexhausted_one():
    headers = {
        "x-ratelimit-reset-requests": "20s",
        "x-ratelimit-remaining-requests": "5",
        "x-ratelimit-reset-tokens": "2s",
        "x-ratelimit-remaining-tokens": "0",
    }
    assert retry_after_ms(headers) == 2000


@pytest.mark.parametrize(
    "status,body,code",
    [
        (400, '{"object":"error","message":"This model\'s maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}', "CONTEXT_WINDOW_EXCEEDED"),
        (400, '{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 199000 + 8000 > 200000"}}', "CONTEXT_WINDOW_EXCEEDED"),
        (402, '{"type":"error","error":{"type":"billing_error","message":"credit balance too low"}}', "QUOTA"),
        (403, '{"type":"error","error":{"type":"permission_error","message":"no access"}}', "AUTH"),
        (404, '{"error":"model \\"llama9\\" not found, try pulling it first"}', "MODEL_UNAVAILABLE"),
        (413, '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}', "BAD_REQUEST"),
        (502, "<html>Bad gateway</html>", "SERVICE_UNAVAILABLE"),
        (504, '{"type":"error","error":{"type":"timeout_error","message":"Request timed out"}}', "TIMEOUT"),
        (529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "OVERLOADED"),
        (500, "", "SERVER"),
    ],
)
def test_http_error_bodies(status, body, code):
    failure = classify_http_error(status, body.encode(), {}, provider="p", model="m")
    assert failure["code"] == code
    assert failure["status"] == status
    assert failure["message"]


def test_non_json_body_keeps_its_text():
    failure = classify_http_error(502, b"<html>Bad gateway</html>", {"cf-ray": "8a1"}, provider="p", model="m")
    assert failure["message"] == "<html>Bad gateway</html>" and failure["requestId"] == "8a1"


def test_retry_after_is_not_attached_to_permanent_failures():
    failure = classify_http_error(400, b'{"error":{"message":"bad"}}', {"retry-after": "5"}, provider="p", model="m")
    assert "providerRetryAfterMs" not in failure


def test_stream_errors():
    assert classify_stream_error({"error": {"message": "x", "type": "rate_limit_exceeded"}}, provider="p", model="m")["code"] == "RATE_LIMIT"
    assert classify_stream_error({"error": {"message": "?"}}, provider="p", model="m")["code"] == "SERVER"
    llama = {"error": {"code": 400, "message": "the request exceeds the available context size", "type": "exceed_context_size_error"}}
    assert classify_stream_error(llama, provider="p", model="m")["code"] == "CONTEXT_WINDOW_EXCEEDED"


def test_redact_masks_keys():
    assert "abcdefghijkl" not in redact("Incorrect API key provided: sk-proj-abcdefghijkl")
    assert redact("token mysecretvalue here", ["mysecretvalue"]) == "token *** here"


def test_transport_errors():
    import httpx

    from agent_lsp.llm.failures import classify_transport_error

    assert classify_transport_error(httpx.ConnectTimeout("slow"), provider="p", model="m")["code"] == "TIMEOUT"
    assert classify_transport_error(httpx.ConnectError("refused"), provider="p", model="m")["code"] == "NETWORK"
    assert classify_transport_error(httpx.RemoteProtocolError("peer closed"), provider="p", model="m")["code"] == "NETWORK"


def test_a_tokens_per_minute_429_is_a_rate_limit_not_an_overflow():
    body = b'{"error":{"message":"Request too large: too many tokens per min (TPM)","type":"tokens"}}'
    assert classify_http_error(429, body, {}, provider="p", model="m")["code"] == "RATE_LIMIT"


def test_error_body_sent_as_an_sse_event():
    body = b'data: {"error": {"message": "prompt is too long: 300000 tokens > 200000 maximum"}}\n\n'
    failure = classify_http_error(400, body, {}, provider="p", model="m")
    assert failure["code"] == "CONTEXT_WINDOW_EXCEEDED" and failure["message"].startswith("prompt is too long")


def test_an_overflow_names_the_sizes_the_server_counted():
    """llama.cpp says how large the prompt was and how large its window is:
    compaction calibrates its estimate and learns the window from them."""
    body = {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                      "type": "exceed_context_size_error", "n_prompt_tokens": 4375, "n_ctx": 4096}}
    failure = classify_http_error(400, json.dumps(body).encode(), {}, provider="p", model="m")
    assert failure["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert (failure["promptTokens"], failure["contextWindow"]) == (4375, 4096)
    assert "promptTokens" not in classify_http_error(400, b'{"error":{"message":"bad"}}', {}, provider="p", model="m")
