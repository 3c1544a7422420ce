"""POST a JSON request and read back an SSE stream, with the three timeouts.

Shared by the OpenAI and Anthropic providers. Every way the exchange can go
wrong leaves here as an `LlmError` with a classified failure: non-2xx
responses (body + headers), connect errors, resets, a stall before the first
byte or between two reads. Closing the generator (the consuming task was
cancelled) closes the response at once, which drops the connection instead
of reading the rest of the stream in the background.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import ssl
from time import perf_counter
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Mapping, Protocol

from . import precedence
from .failures import classify_http_error, classify_stream_error, classify_transport_error, error_message, request_id
from .sse import SseDecoder, SseEvent
from .types import BAD_REQUEST, TIMEOUT, LlmError
from .wrong_endpoint import html_answer, path_not_there

if TYPE_CHECKING:  # httpx (~100 ms to import) loads with the first request, not with the provider
    import httpx

_MAX_ERROR_BODY = 64 * 1024


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    first_byte: float = 180.0
    idle: float = 180.0


@dataclass
class StreamContext:
    """Who is asking, for the failures' provenance and messages."""

    provider: str
    model: str
    auth_hint: str = ""
    secrets: tuple[str, ...] = ()
    request_id: str | None = field(default=None)  # set once the response headers arrive
    endpoint_hint: str = ""  # where the base URL comes from, e.g. "the endpoint comes from OPENAI_BASE_URL"
    model_hint: str = ""  # where the model name comes from


@functools.cache
def http2_available() -> bool:
    return importlib.util.find_spec("h2") is not None


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The certificate store, loaded once per process: building it (reading the
    CA bundle) takes ~10-30 ms, which every new session paid with its client.
    httpx's own default, environment included (SSL_CERT_FILE, SSL_CERT_DIR)."""
    import httpx

    return httpx.create_ssl_context()


def prepare() -> None:
    """Load what a first request needs (httpx, the TLS context) ahead of it, off
    the event loop: the server does it in the background once a session has an
    HTTP provider."""
    _tls_context()


def make_client(timeouts: Timeouts) -> httpx.AsyncClient:
    """One pooled client per provider. httpx's read timeout is off: the
    first-byte and idle timeouts are enforced around each read instead."""
    import httpx

    return httpx.AsyncClient(
        verify=_tls_context(),
        http2=http2_available(),
        timeout=httpx.Timeout(connect=timeouts.connect, read=None, write=timeouts.connect, pool=timeouts.connect),
        limits=httpx.Limits(max_connections=32, max_keepalive_connections=8, keepalive_expiry=30.0),
    )


class PooledClient:
    """A provider's pooled HTTP client (`make_client`), made on first use: httpx
    (~100 ms to import) and the TLS context load with the first request, not
    when a session opens."""

    def __init__(self, timeouts: Timeouts):
        self._timeouts = timeouts
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = make_client(self._timeouts)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def _hint(hint: str) -> str:
    return f" ({hint})" if hint else ""


def _fail(ctx: StreamContext, code: str, message: str) -> LlmError:
    failure: dict[str, Any] = {"code": code, "message": message, "provider": ctx.provider, "model": ctx.model}
    if ctx.request_id:
        failure["requestId"] = ctx.request_id
    return LlmError(failure)  # type: ignore[arg-type]


async def stream_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    timeouts: Timeouts,
    ctx: StreamContext,
) -> AsyncIterator[list[SseEvent]]:
    """Yield the SSE events of the response, one list per network read (one
    async hop per read, not per event: this is the hot path); raise LlmError
    on any failure. A clean end of the body simply ends the iteration:
    whether the stream carried its terminal event is for the caller to judge."""
    import httpx

    loop = asyncio.get_running_loop()
    try:
        request = client.build_request("POST", url, json=body, headers=headers)
    except httpx.InvalidURL as exc:
        raise _fail(ctx, BAD_REQUEST, f"invalid base URL {url!r}: {exc}{_hint(ctx.endpoint_hint)}") from exc
    deadline = loop.time() + timeouts.first_byte
    try:
        async with asyncio.timeout_at(deadline):
            response = await client.send(request, stream=True)
    except TimeoutError:
        raise _fail(ctx, TIMEOUT, f"no response from {url} within {timeouts.first_byte:g} s") from None
    except httpx.RequestError as exc:
        raise LlmError(classify_transport_error(exc, provider=ctx.provider, model=ctx.model, url=url,
                                                hint=ctx.endpoint_hint)) from exc

    ctx.request_id = request_id(response.headers)
    chunks = response.aiter_bytes()
    try:
        html = html_answer(response.status_code, response.headers, url=url, provider=ctx.provider,
                           model=ctx.model, hint=ctx.endpoint_hint)
        if html is not None:  # a web page or web app, not a model API: no need to read it
            raise LlmError(html)
        if not 200 <= response.status_code < 300:
            raise await _error_from_response(response, deadline, ctx, url)
        if response.headers.get("content-type", "").startswith("application/json"):
            # A server that answered a stream request with one JSON object: an error, or unusable.
            raise await _error_from_response(response, deadline, ctx, url)
        decoder = SseDecoder()
        first = True
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                break
            except TimeoutError:
                if first:
                    raise _fail(ctx, TIMEOUT, f"no data within {timeouts.first_byte:g} s") from None
                raise _fail(ctx, TIMEOUT, f"stream stalled: no data for {timeouts.idle:g} s") from None
            except httpx.RequestError as exc:
                failure = classify_transport_error(exc, provider=ctx.provider, model=ctx.model, url=url,
                                                   hint=ctx.endpoint_hint)
                if ctx.request_id:
                    failure["requestId"] = ctx.request_id
                raise LlmError(failure) from exc
            first = False
            deadline = loop.time() + timeouts.idle
            events = decoder.feed(chunk)
            if events:
                yield events
        events = decoder.close()
        if events:
            yield events
    finally:
        await _close_quietly(chunks, response)


async def _close_quietly(chunks: Any, response: httpx.Response) -> None:
    try:
        await chunks.aclose()
    except Exception:  # noqa: BLE001 - closing must not mask the real outcome
        pass
    try:
        await response.aclose()
    except Exception:  # noqa: BLE001
        pass


async def _error_from_response(response: httpx.Response, deadline: float, ctx: StreamContext, url: str) -> LlmError:
    import httpx

    body = bytearray()
    try:
        async with asyncio.timeout_at(deadline):
            async for part in response.aiter_bytes():
                body += part
                if len(body) > _MAX_ERROR_BODY:
                    break
    except (TimeoutError, httpx.TransportError):
        pass  # classify on what arrived
    if 200 <= response.status_code < 300:
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if isinstance(payload, dict) and "error" in payload:
            return LlmError(
                classify_stream_error(
                    payload, provider=ctx.provider, model=ctx.model, request_id=ctx.request_id, secrets=ctx.secrets
                )
            )
        return _fail(ctx, BAD_REQUEST, "the server answered with JSON instead of an event stream (streaming unsupported?)")
    failure = classify_http_error(
        response.status_code,
        bytes(body),
        response.headers,
        provider=ctx.provider,
        model=ctx.model,
        auth_hint=ctx.auth_hint,
        model_hint=ctx.model_hint,
        secrets=ctx.secrets,
    )
    said = error_message(bytes(body))
    return LlmError(path_not_there(failure, said, url=url, hint=ctx.endpoint_hint) or failure)


async def drain(events: AsyncIterator[list[SseEvent]], seconds: float = 0.1) -> None:
    """Read what follows the terminal event (normally just the body's end) so
    the connection goes back to the pool instead of being dropped."""
    try:
        async with asyncio.timeout(seconds):
            async for _ in events:
                pass
    except (TimeoutError, LlmError):
        pass


class StreamState(Protocol):
    """A provider's normaliser: SSE events in, chunk dicts out."""

    done: bool  # the terminal event was seen

    def end(self) -> list[dict[str, Any]]:
        """The closing chunks, `finish` last; raises LlmError if the stream ended early."""


# How long one stream may hold the event loop with the events of one network
# read before it lets the others run. A read of a fast stream holds hundreds of
# deltas (httpcore reads up to 64 KiB, ~3 ms of decoding): with ten streams
# every other task waited ~30 ms per loop turn, and a turn that was starting
# (request, connect, response headers: several loop turns) waited that long
# at each of them before its first chunk.
SLICE_S = 0.0005
_SLICE_CHECK = 16  # events between two looks at the clock


async def normalise(
    events: AsyncIterator[list[SseEvent]],
    state: StreamState,
    feed: Callable[[SseEvent], list[dict[str, Any]]],
) -> AsyncIterator[dict[str, Any]]:
    """Drive `state` over the SSE events and yield its chunks, `finish` last.

    The deltas of one network read arrived together: consecutive ones of the
    same kind (text, reasoning, one tool call's arguments) are yielded as one
    chunk (`join_deltas`). Nothing is held back across reads, so no delta
    waits for the next one, and the loop, the session log and the relay
    handle one event per read instead of one per token. A read that takes
    longer than `SLICE_S` to go through is yielded in slices, the loop let
    run other tasks (other sessions, requests) between two, longer while a
    turn that is starting or ending holds precedence (`precedence.py`)."""
    delivered = False  # a stream gives way to others' work only after its own first chunk
    async with aclosing(events):
        async for batch in events:
            out: list[dict[str, Any]] = []
            if delivered and precedence.held():
                await precedence.give_way()
            try:
                sliced_at = perf_counter() if len(batch) > _SLICE_CHECK else 0.0
                for i, event in enumerate(batch, 1):
                    join_deltas(out, feed(event))
                    if sliced_at and not i % _SLICE_CHECK and i < len(batch) and perf_counter() - sliced_at > SLICE_S:
                        for chunk in out:
                            yield chunk
                        delivered = delivered or bool(out)
                        out = []
                        await precedence.give_way()
                        sliced_at = perf_counter()
                    if state.done:
                        *closing, finish = state.end()
                        join_deltas(out, closing)
                        for chunk in out:
                            yield chunk
                        # Consumers stop at `finish`: read the body's end first, so the
                        # connection returns to the pool instead of being dropped.
                        await drain(events)
                        yield finish
                        return
            except LlmError:
                for chunk in out:  # what came before the failure is kept
                    yield chunk
                raise
            for chunk in out:
                yield chunk
            delivered = delivered or bool(out)
    for chunk in state.end():  # raises: the stream ended before its terminal event
        yield chunk


_JOINED = {"text-delta": ("text", 2), "reasoning-delta": ("text", 2), "tool-call-delta": ("delta", 3)}


def join_deltas(out: list[dict[str, Any]], chunks: list[dict[str, Any]]) -> None:
    """Append `chunks` to `out`, joining a delta onto the one before it when
    both are plain deltas of the same kind (and, for tool calls, the same
    call): {"type", "text"} or {"type", "id", "delta"} with nothing else.
    The chunks are the provider's fresh dicts: the last one is extended in place."""
    for chunk in chunks:
        if out:
            last = out[-1]
            kind = chunk.get("type")
            if kind == last.get("type") and kind in _JOINED:
                field, size = _JOINED[kind]
                text, piece = last.get(field), chunk.get(field)
                if (len(chunk) == size and len(last) == size and last.get("id") == chunk.get("id")
                        and type(text) is str and type(piece) is str):
                    last[field] = text + piece
                    continue
        out.append(chunk)


def apply_body_settings(body: dict[str, Any], defaults: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
    """The configured request fields: `defaults` (e.g. top_p, stop) where the
    request has none, then `extra` (the extraBody setting) over everything; a
    None in `extra` removes a key (e.g. {"stream_options": None} for a server
    that rejects it)."""
    for key, value in defaults.items():
        if value is not None and value != []:
            body.setdefault(key, value)
    for key, value in extra.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")
