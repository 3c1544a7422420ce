"""Anthropic Messages (`POST {base}/v1/messages`, streamed).

History mapping: reasoning blocks go back as `thinking` (signature intact) or
`redacted_thinking`; tool results become `tool_result` blocks at the start of
the next user turn; consecutive same-role turns are merged. Prompt caching
puts breakpoints on the tools, the system prompt and the last two user turns,
so each request reads the previous request's prefix from the cache.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Mapping
from urllib.parse import urlsplit

from agent_lsp import secrets

from .endpoint import Endpoint
from .failures import classify_stream_error, redact
from .sse import parse_json
from .model_list import list_model_ids
from .transport import StreamContext, Timeouts, apply_body_settings, join_url, PooledClient, normalise, stream_sse
from .types import EMPTY_RESPONSE, NETWORK, REFUSAL, SERVER, LlmError, ModelRequest, Usage
from .window_probe import FIRST_REQUEST_WAIT_S, ProbedWindows, WindowProbe

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
# Prompt + max_tokens must fit the context window, so the default stays well below a model's maximum.
DEFAULT_MAX_TOKENS_CAP = 16_384
_CACHE = {"type": "ephemeral"}


# --- request -----------------------------------------------------------------------------


def _tool_input(arguments: str | None) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _assistant_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for b in message.get("content", ()):
        kind = b.get("type")
        if kind == "text":
            if b.get("text"):  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": b["text"]})
        elif kind == "reasoning":
            if b.get("redactedData"):
                blocks.append({"type": "redacted_thinking", "data": b["redactedData"]})
            elif b.get("signature"):
                blocks.append({"type": "thinking", "thinking": b.get("text", ""), "signature": b["signature"]})
            # Unsigned reasoning (from another provider) cannot be sent back: dropped.
        elif kind == "tool-call":
            blocks.append({"type": "tool_use", "id": b["id"], "name": b["name"], "input": _tool_input(b.get("arguments"))})
    return blocks


def _user_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Text blocks, and `image` blocks (base64 source) for the images the message holds."""
    blocks: list[dict[str, Any]] = []
    for b in message.get("content", ()):
        if b.get("type") == "text" and b.get("text"):
            blocks.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image" and b.get("data"):
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": b["mediaType"], "data": b["data"]}})
    return blocks


def to_anthropic_messages(messages: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]], *, results: bool = False) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            previous = out[-1]["content"]
            if results:
                # tool_result blocks must open the user turn, ahead of any text.
                at = sum(1 for b in previous if b.get("type") == "tool_result")
                previous[at:at] = blocks
            else:
                previous.extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for message in messages:
        role = message.get("role")
        if role == "user":
            add("user", _user_blocks(message))
        elif role == "assistant":
            add("assistant", _assistant_blocks(message))
        elif role == "tool":
            text = "".join(b.get("text", "") for b in message.get("content", ()) if b.get("type") == "text")
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message["callId"]}
            if text:  # an empty text block is rejected; no content at all is fine
                result["content"] = text
            if message.get("isError"):
                result["is_error"] = True
            add("user", [result], results=True)
    return out


def _mark_cache(block: dict[str, Any]) -> None:
    block["cache_control"] = dict(_CACHE)


def build_request_body(request: ModelRequest, *, default_max_tokens: int, cache: bool = True) -> dict[str, Any]:
    messages = to_anthropic_messages(request.messages)
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens or default_max_tokens,
        "messages": messages,
        "stream": True,
    }
    if request.system:
        system = {"type": "text", "text": request.system}
        if cache:
            _mark_cache(system)
        body["system"] = [system]
    if request.tools:
        tools = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in request.tools]
        if cache:
            _mark_cache(tools[-1])
        body["tools"] = tools
    if cache:
        # Two history breakpoints (4 is the API's limit): the newest user turn, which the next
        # request will read back, and the one before, which this request reads.
        user_turns = [m for m in messages if m["role"] == "user"]
        for turn in user_turns[-2:]:
            _mark_cache(turn["content"][-1])
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if "thinking" in request.options:
        body["thinking"] = request.options["thinking"]
    extra = request.options.get("extraBody")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


# --- response stream ---------------------------------------------------------------------


def normalise_usage(usage: Mapping[str, Any]) -> Usage:
    cache_write = int(usage.get("cache_creation_input_tokens") or 0)
    cache_read = int(usage.get("cache_read_input_tokens") or 0)
    return {
        # inputTokens counts every prompt token, cached ones included (types.py).
        "inputTokens": int(usage.get("input_tokens") or 0) + cache_write + cache_read,
        "outputTokens": int(usage.get("output_tokens") or 0),
        "cacheReadTokens": cache_read,
        "cacheWriteTokens": cache_write,
    }


class AnthropicStream:
    """Messages stream events (name + JSON data) -> stream chunk dicts."""

    def __init__(self, ctx: StreamContext):
        self._ctx = ctx
        self._raw_usage: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}  # index -> {"kind", "id"?, "signature"?}
        self._stop_reason: str | None = None
        self._has_content = False
        self._refusal_text: list[str] = []
        self.done = False  # saw message_stop

    def _fail(self, code: str, message: str) -> LlmError:
        failure: dict[str, Any] = {"code": code, "message": redact(message, self._ctx.secrets),
                                   "provider": self._ctx.provider, "model": self._ctx.model}
        if self._ctx.request_id:
            failure["requestId"] = self._ctx.request_id
        return LlmError(failure)  # type: ignore[arg-type]

    def feed(self, event: str | None, data: str) -> list[dict[str, Any]]:
        if event == "ping" or event is None and not data.startswith("{"):
            return []
        try:
            payload = parse_json(data)
        except ValueError:
            raise self._fail(SERVER, f"malformed JSON in a stream event: {data[:200]!r}") from None
        if not isinstance(payload, dict):
            raise self._fail(SERVER, f"unexpected stream event: {data[:200]!r}")
        kind = payload.get("type") or event
        if kind == "content_block_delta":
            return self._block_delta(payload)
        if kind == "content_block_start":
            return self._block_start(payload)
        if kind == "content_block_stop":
            return self._block_stop(payload)
        if kind == "message_start":
            usage = (payload.get("message") or {}).get("usage")
            if usage:
                self._raw_usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_delta":
            delta = payload.get("delta") or {}
            if delta.get("stop_reason"):
                self._stop_reason = delta["stop_reason"]
            usage = payload.get("usage")
            if usage:  # cumulative: overwrite, never add
                self._raw_usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise LlmError(
                classify_stream_error(
                    payload,
                    provider=self._ctx.provider,
                    model=self._ctx.model,
                    request_id=self._ctx.request_id,
                    secrets=self._ctx.secrets,
                )
            )
        return []  # ping and unknown events

    def _block_start(self, payload: Mapping[str, Any]) -> list[dict[str, Any]]:
        block = payload.get("content_block") or {}
        kind = block.get("type")
        index = payload.get("index", 0)
        if kind == "text":
            self._blocks[index] = {"kind": "text"}
            out = [{"type": "text-start"}]
            if block.get("text"):
                out.append(self._text(block["text"]))
            return out
        if kind == "thinking":
            self._blocks[index] = {"kind": "reasoning", "signature": block.get("signature") or ""}
            out = [{"type": "reasoning-start"}]
            if block.get("thinking"):
                out.append({"type": "reasoning-delta", "text": block["thinking"]})
            return out
        if kind == "redacted_thinking":
            self._blocks[index] = {"kind": "redacted"}
            return [{"type": "reasoning-start"}, {"type": "reasoning-end", "redactedData": block.get("data", "")}]
        if kind == "tool_use":
            self._blocks[index] = {"kind": "tool", "id": block.get("id", "")}
            self._has_content = True
            out = [{"type": "tool-call-start", "id": block.get("id", ""), "name": block.get("name", "")}]
            if block.get("input"):  # normally {} with the JSON streamed after
                out.append({"type": "tool-call-delta", "id": block.get("id", ""), "delta": json.dumps(block["input"])})
            return out
        self._blocks[index] = {"kind": "ignored"}  # server tools, results: not ours to run
        return []

    def _text(self, text: str) -> dict[str, Any]:
        if not self._has_content and not text.isspace():
            self._has_content = True
        return {"type": "text-delta", "text": text}

    def _block_delta(self, payload: Mapping[str, Any]) -> list[dict[str, Any]]:
        delta = payload.get("delta") or {}
        block = self._blocks.get(payload.get("index", 0))
        if block is None:
            return []
        kind = delta.get("type")
        if kind == "text_delta":
            return [self._text(delta.get("text", ""))] if delta.get("text") else []
        if kind == "input_json_delta":
            part = delta.get("partial_json")
            return [{"type": "tool-call-delta", "id": block["id"], "delta": part}] if part else []
        if kind == "thinking_delta":
            return [{"type": "reasoning-delta", "text": delta["thinking"]}] if delta.get("thinking") else []
        if kind == "signature_delta":
            block["signature"] = block.get("signature", "") + (delta.get("signature") or "")
        return []  # citations and unknown deltas

    def _block_stop(self, payload: Mapping[str, Any]) -> list[dict[str, Any]]:
        block = self._blocks.get(payload.get("index", 0))
        if block is None:
            return []
        kind = block["kind"]
        if kind == "text":
            return [{"type": "text-end"}]
        if kind == "reasoning":
            end: dict[str, Any] = {"type": "reasoning-end"}
            if block.get("signature"):
                end["signature"] = block["signature"]
            return [end]
        if kind == "tool":
            return [{"type": "tool-call-end", "id": block["id"]}]
        return []

    def end(self) -> list[dict[str, Any]]:
        if not self.done:
            raise self._fail(NETWORK, "the stream ended before its end (message_stop missing)")
        out: list[dict[str, Any]] = []
        if self._raw_usage:
            out.append({"type": "usage", "usage": normalise_usage(self._raw_usage)})
        reason = self._stop_reason
        if reason == "refusal":
            raise self._fail(REFUSAL, "the model declined to answer (stop_reason: refusal)")
        if reason in ("max_tokens", "model_context_window_exceeded"):
            out.append({"type": "finish", "kind": "max-tokens"})
        elif reason == "tool_use" or any(b["kind"] == "tool" for b in self._blocks.values()):
            out.append({"type": "finish", "kind": "tool-calls"})
        elif not self._has_content:
            raise self._fail(EMPTY_RESPONSE, "the model returned no content")
        else:
            out.append({"type": "finish", "kind": "stop"})
        return out


# --- provider ----------------------------------------------------------------------------


class AnthropicProvider(ProbedWindows):
    """The Messages API. One pooled httpx client per instance."""

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        name: str = "anthropic",
        headers: Mapping[str, str] | None = None,
        timeouts: Timeouts = Timeouts(),
        auth_hint: str = "",
        endpoint_hint: str = "",
        model_hint: str = "",
        endpoint: Endpoint | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        prompt_caching: bool = True,
        top_p: float | None = None,
        stop: list[str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ):
        self.name = name
        self.base_url = base_url
        # ANTHROPIC_BASE_URL conventionally has no /v1; accept it with one too.
        base = base_url.rstrip("/")
        self._url = join_url(base, "messages" if base.endswith("/v1") else "v1/messages")
        self._timeouts = timeouts
        self._auth_hint = auth_hint
        self._hints = {"endpoint_hint": endpoint_hint, "model_hint": model_hint}
        self.endpoint = endpoint or Endpoint(base_url)
        self._context_window = context_window
        self._max_output_tokens = max_output_tokens
        self._prompt_caching = prompt_caching
        self._body_defaults = {"top_p": top_p, "stop_sequences": list(stop or [])}
        self._extra_body = dict(extra_body or {})
        self._headers = {"anthropic-version": API_VERSION, "Accept": "text/event-stream", **(headers or {})}
        if api_key:
            self._headers["x-api-key"] = api_key
        self._secrets = tuple(s for s in (api_key, *(headers or {}).values()) if s)
        secrets.register(api_key)
        secrets.register_headers(headers or {})
        self._http = PooledClient(timeouts)
        # A server that is not Anthropic's (llama.cpp, Ollama, vLLM, LM Studio speak this API
        # too) is asked the window it runs a model with; Anthropic's models are in the table.
        own = (urlsplit(base_url).hostname or "").endswith("anthropic.com")
        self.windows = WindowProbe(base if base.endswith("/v1") else base + "/v1", lambda: self._http.client,
                                   self._headers, enabled=not own and not context_window)

    def __repr__(self) -> str:
        return f"AnthropicProvider(name={self.name!r}, base_url={self.base_url!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[dict[str, Any]]:
        await self.windows.within(request.model, FIRST_REQUEST_WAIT_S)
        if self._max_output_tokens:  # configured explicitly: the user's call
            default_max = self._max_output_tokens
        else:
            known_max = self.model_info(request.model).max_output_tokens
            default_max = min(known_max, DEFAULT_MAX_TOKENS_CAP) if known_max else DEFAULT_MAX_TOKENS
        body = build_request_body(request, default_max_tokens=default_max, cache=self._prompt_caching)
        apply_body_settings(body, self._body_defaults, self._extra_body)
        ctx = StreamContext(self.name, request.model, self._auth_hint, self._secrets, **self._hints)
        state = AnthropicStream(ctx)
        events = stream_sse(self._http.client, self._url, body=body, headers=self._headers, timeouts=self._timeouts, ctx=ctx)
        try:
            async for chunk in normalise(events, state, lambda event: state.feed(event.event, event.data)):
                yield chunk
        except LlmError as error:
            self.endpoint.annotate(error)
            raise

    async def list_models(self) -> list[str]:
        """The models the Messages API lists (`GET /v1/models`); ModelListError if it does not."""
        url = self._url.rsplit("/", 1)[0] + "/models"  # beside .../v1/messages
        return await list_model_ids(self._http.client, url, self._headers, {"limit": "1000"})

    async def aclose(self) -> None:
        await self._http.aclose()
