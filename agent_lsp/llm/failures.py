"""HTTP status, error body, headers and transport errors -> one LlmFailure.

The loop routes on `code` only (R9 in docs/agent-loop.md), so every provider quirk is
resolved here: OpenAI-shaped `{"error": {...}}` bodies (also vLLM's and
llama.cpp's variants), Anthropic `{"type": "error", "error": {...}}`, the
retry headers (`retry-after-ms`, `retry-after` in seconds or as an HTTP date,
OpenAI's `x-ratelimit-reset-*` Go durations, Anthropic's
`anthropic-ratelimit-*-reset` timestamps), and context-overflow messages
that have no code of their own.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit


from agent_lsp.secrets import mask_fields

from .types import (
    AUTH,
    BAD_REQUEST,
    CONTENT_FILTER,
    CONTEXT_WINDOW_EXCEEDED,
    MODEL_UNAVAILABLE,
    NETWORK,
    OVERLOADED,
    QUOTA,
    RATE_LIMIT,
    SERVER,
    SERVICE_UNAVAILABLE,
    TIMEOUT,
    UNKNOWN,
    LlmFailure,
)

# Messages of context overflow across OpenAI, vLLM, llama.cpp, Anthropic, Ollama, LM Studio…
_CONTEXT_MESSAGE = re.compile(
    r"maximum context length|context length exceeded|context_length_exceeded|prompt is too long"
    r"|exceed(?:s|ed)? (?:the )?(?:available |model's )?context|context (?:window|size) (?:exceeded|is exceeded)"
    r"|too many tokens|input length and `?max_tokens`? exceed",
    re.IGNORECASE,
)
_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "model_context_window_exceeded"})

# Error `type`/`code` strings -> taxonomy, checked before the HTTP status.
_TYPE_CODES: dict[str, str] = {
    "insufficient_quota": QUOTA,
    "billing_error": QUOTA,
    "rate_limit_error": RATE_LIMIT,
    "rate_limit_exceeded": RATE_LIMIT,
    "overloaded_error": OVERLOADED,
    "authentication_error": AUTH,
    "invalid_api_key": AUTH,
    "permission_error": AUTH,
    "model_not_found": MODEL_UNAVAILABLE,
    "not_found_error": MODEL_UNAVAILABLE,
    "api_error": SERVER,
    "server_error": SERVER,
    "internal_server_error": SERVER,
    "timeout_error": TIMEOUT,
    "content_filter": CONTENT_FILTER,
    "content_policy_violation": CONTENT_FILTER,
    "invalid_request_error": BAD_REQUEST,
    "request_too_large": BAD_REQUEST,
}

_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_GO_UNIT_MS = {"h": 3_600_000.0, "m": 60_000.0, "s": 1000.0, "ms": 1.0, "us": 0.001, "µs": 0.001, "ns": 1e-6}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` without any of `secrets` and without anything `agent_lsp.secrets`
    masks (registered secrets, key-looking tokens, secret-named fields): a
    provider may echo a key back ("Incorrect API key provided: sk-abc…")."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return mask_fields(text)


# --- retry headers -----------------------------------------------------------------------


def _go_duration_ms(value: str) -> float | None:
    """`6m0s`, `1s`, `100ms`, `1h2m3.5s` -> milliseconds."""
    value = value.strip()
    parts = _GO_DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _GO_UNIT_MS[u] for n, u in parts)


def _delay_until_ms(value: str, now: float) -> float | None:
    """An RFC 3339 timestamp or HTTP date -> milliseconds from `now` (epoch s)."""
    value = value.strip()
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            from email.utils import parsedate_to_datetime  # ~30 ms to import: only for such a header

            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return (moment.timestamp() - now) * 1000.0


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number == number else None  # NaN is not a delay


def retry_after_ms(headers: Mapping[str, str], *, now: float | None = None) -> int | None:
    """The wait the provider asked for, in ms, or None when it did not say.

    Order: `retry-after-ms`, `retry-after` (seconds or HTTP date), then the
    rate-limit reset headers (the exhausted buckets' resets when the
    `remaining` counterparts say which, otherwise the latest reset)."""
    now = time.time() if now is None else now
    lower = {k.lower(): v for k, v in headers.items()}
    ms = _float(lower.get("retry-after-ms"))
    if ms is not None and ms >= 0:
        return int(ms)
    if "retry-after" in lower:
        seconds = _float(lower["retry-after"])
        if seconds is None:
            seconds_ms = _delay_until_ms(lower["retry-after"], now)
        else:
            seconds_ms = seconds * 1000.0
        if seconds_ms is not None and seconds_ms >= 0:
            return int(seconds_ms)
    resets: list[tuple[float, bool]] = []  # (delay ms, bucket exhausted)
    for name, value in lower.items():
        if name.startswith("x-ratelimit-reset-"):
            delay = _go_duration_ms(value)
            if delay is None:
                delay = _float(value)
                delay = None if delay is None else delay * 1000.0
            remaining = lower.get("x-ratelimit-remaining-" + name[len("x-ratelimit-reset-") :])
        elif name.startswith("anthropic-ratelimit-") and name.endswith("-reset"):
            delay = _delay_until_ms(value, now)
            remaining = lower.get(name[: -len("-reset")] + "-remaining")
        else:
            continue
        if delay is not None:
            resets.append((max(delay, 0.0), remaining is not None and remaining.strip() == "0"))
    if not resets:
        return None
    exhausted = [d for d, empty in resets if empty]
    return int(max(exhausted or [d for d, _ in resets]))


def request_id(headers: Mapping[str, str], body: Any = None) -> str | None:
    for name in ("x-request-id", "request-id", "cf-ray"):
        value = headers.get(name)
        if value:
            return value
    if isinstance(body, dict) and isinstance(body.get("request_id"), str):
        return body["request_id"]
    return None


# --- error bodies ------------------------------------------------------------------------


def _error_object(body: Any) -> dict[str, Any]:
    """The `{"message", "type", "code", …}` part of any known error body shape."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            return inner
        if isinstance(inner, str):  # {"error": "model not found"} (older Ollama)
            return {"message": inner}
        if body.get("object") == "error" or "message" in body:  # older vLLM: top level
            return body
    return {}


def _code_from(error: Mapping[str, Any], status: int | None) -> str | None:
    """The taxonomy code an error object's own type/code names, if any."""
    message = str(error.get("message") or "")
    words = [str(error.get(k)) for k in ("code", "type") if isinstance(error.get(k), str)]
    details = error.get("details")
    if isinstance(details, dict) and isinstance(details.get("error_code"), str):
        words.append(details["error_code"])
    if any(w in _CONTEXT_CODES for w in words):
        return CONTEXT_WINDOW_EXCEEDED
    # By message only where the status leaves room for it: a 429 "too many tokens per
    # minute" is a rate limit, not an overflow.
    if status not in (401, 402, 403, 429) and _CONTEXT_MESSAGE.search(message):
        return CONTEXT_WINDOW_EXCEEDED
    for word in words:
        if word in _TYPE_CODES:
            code = _TYPE_CODES[word]
            # A generic "invalid_request_error" on a 404 is still a missing model.
            if code == BAD_REQUEST and status == 404:
                return MODEL_UNAVAILABLE
            return code
    return None


def _code_from_status(status: int) -> str:
    if status in (401, 403):
        return AUTH
    if status == 402:
        return QUOTA
    if status == 404:
        return MODEL_UNAVAILABLE
    if status == 408:
        return TIMEOUT
    if status == 429:
        return RATE_LIMIT
    if status == 529:
        return OVERLOADED
    if status in (502, 503):
        return SERVICE_UNAVAILABLE
    if status == 504:
        return TIMEOUT
    if status >= 500 or status == 409:
        return SERVER
    if 400 <= status < 500:
        return BAD_REQUEST
    return UNKNOWN


def _parse_body(body: bytes | str | Any) -> Any:
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str):
        text = body.strip()
        if text.startswith("data:"):  # an error sent as one SSE event
            text = text[5:].strip()
        try:
            return json.loads(text)
        except ValueError:
            return body.strip()
    return body


def error_message(body: bytes | str | Any) -> str:
    """The words of an error body: its `message`, or the body itself when it is plain text."""
    parsed = _parse_body(body)
    message = _error_object(parsed).get("message")
    if message:
        return str(message)
    return parsed if isinstance(parsed, str) else ""


def classify_http_error(
    status: int,
    body: bytes | str | Any,
    headers: Mapping[str, str],
    *,
    provider: str,
    model: str,
    auth_hint: str = "",
    model_hint: str = "",
    secrets: Iterable[str] = (),
) -> LlmFailure:
    """A non-2xx response -> a failure. `auth_hint` (e.g. "set ANTHROPIC_API_KEY")
    is appended to AUTH messages and `model_hint` (where the model name comes
    from) to MODEL_UNAVAILABLE ones, so the user knows what to fix."""
    parsed = _parse_body(body)
    error = _error_object(parsed)
    code = _code_from(error, status)
    if code is None or (code == BAD_REQUEST and status >= 500):
        code = _code_from_status(status)
    # A 401/403 is about credentials whatever the body calls it.
    if status in (401, 403):
        code = AUTH
    message = str(error.get("message") or "") or (parsed if isinstance(parsed, str) and parsed else "")
    if not message:
        message = f"HTTP {status}"
    failure: LlmFailure = {"code": code, "status": status, "provider": provider, "model": model}
    if code == AUTH and auth_hint:
        message = f"{message} ({auth_hint})"
    elif code == MODEL_UNAVAILABLE and model_hint:
        message = f"{message} (the model name {model!r} {model_hint})"
    failure["message"] = redact(message, secrets)[:2000]
    wait = retry_after_ms(headers)
    if wait is not None and code in (RATE_LIMIT, OVERLOADED, SERVICE_UNAVAILABLE, SERVER, TIMEOUT):
        failure["providerRetryAfterMs"] = wait
    rid = request_id(headers, parsed)
    if rid:
        failure["requestId"] = rid
    if code == CONTEXT_WINDOW_EXCEEDED:
        _context_sizes(error, failure)
    return failure


def _context_sizes(error: Mapping[str, Any], failure: LlmFailure) -> None:
    """The sizes an overflow names: llama.cpp's `n_prompt_tokens` and `n_ctx`."""
    for source, key in (("n_prompt_tokens", "promptTokens"), ("n_ctx", "contextWindow")):
        value = error.get(source)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            failure[key] = value  # type: ignore[literal-required]


def classify_stream_error(
    payload: Mapping[str, Any],
    *,
    provider: str,
    model: str,
    request_id: str | None = None,
    secrets: Iterable[str] = (),
) -> LlmFailure:
    """An error that arrived inside a 200 stream (`data: {"error": …}` or
    Anthropic's `event: error`). Without a recognisable type it is a server
    fault (transient), which is what such events are in practice."""
    error = _error_object(payload)
    status = error.get("code") if isinstance(error.get("code"), int) else None
    code = _code_from(error, status) or (_code_from_status(status) if status else SERVER)
    failure: LlmFailure = {
        "code": code,
        "message": redact(str(error.get("message") or "error event in the stream"), secrets)[:2000],
        "provider": provider,
        "model": model,
    }
    if status:
        failure["status"] = status
    if code == CONTEXT_WINDOW_EXCEEDED:
        _context_sizes(error, failure)
    rid = request_id or (payload.get("request_id") if isinstance(payload.get("request_id"), str) else None)
    if rid:
        failure["requestId"] = rid
    return failure


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def classify_transport_error(exc: BaseException, *, provider: str, model: str, url: str = "",
                             hint: str = "") -> LlmFailure:
    """httpx transport exceptions -> NETWORK or TIMEOUT (a bad URL scheme: BAD_REQUEST).
    The message names the URL and `hint` (where the base URL comes from). A
    connection refused on this machine is not worth retrying: nothing listens
    there, and a local model server binds its port before it loads a model."""
    import httpx  # loaded by the request that failed already

    where = f" {url}" if url else ""
    retryable = True
    connect = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
    if isinstance(exc, httpx.UnsupportedProtocol):
        code, what = BAD_REQUEST, f"unsupported URL{where} (check the base URL)"
    elif isinstance(exc, httpx.ConnectTimeout):
        code, what = TIMEOUT, f"connecting to{where} timed out"
    elif isinstance(exc, httpx.TimeoutException):
        code, what = TIMEOUT, f"{url or 'the request'} timed out"
    elif isinstance(exc, httpx.ConnectError):
        code, what = NETWORK, f"cannot connect to{where}"
        if url and _is_loopback(url):
            retryable = False
            what += " (nothing listens there: is the model server running?)"
    elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        code, what = NETWORK, f"connection to{where} lost"
    else:
        code, what = NETWORK, f"transport error with{where}"
    detail = str(exc) or type(exc).__name__
    message = f"{what}: {detail}" + (f"; {hint}" if hint else "")
    failure: LlmFailure = {"code": code, "message": message, "provider": provider, "model": model}
    if not retryable:
        failure["retryable"] = False
    if connect:
        failure["phase"] = "connect"
    return failure


__all__ = [
    "classify_http_error",
    "error_message",
    "classify_stream_error",
    "classify_transport_error",
    "redact",
    "request_id",
    "retry_after_ms",
]
