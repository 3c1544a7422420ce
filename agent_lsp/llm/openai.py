"""OpenAI-compatible Chat Completions (`POST {base}/chat/completions`, streamed).

Works with OpenAI and the servers that copy its format (Ollama, vLLM,
llama.cpp, LM Studio, OpenRouter, DeepSeek, Groq…), whose quirks are
absorbed here: `reasoning_content`/`reasoning` deltas, tool calls repeated
whole or with id and name on every fragment, a new call reusing index 0 with
a new id, usage in any chunk, errors inside the stream.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any, AsyncIterator, Mapping
from urllib.parse import urlsplit

from agent_lsp import secrets

from .failures import classify_stream_error, redact
from .sse import SseEvent, parse_json
from .endpoint import Endpoint
from .window_probe import FIRST_REQUEST_WAIT_S, ProbedWindows, WindowProbe
from .model_list import list_model_ids, name_listed_models
from .transport import StreamContext, Timeouts, apply_body_settings, join_url, PooledClient, normalise, stream_sse
from .types import (
    CONTENT_FILTER,
    EMPTY_RESPONSE,
    MODEL_UNAVAILABLE,
    NETWORK,
    REFUSAL,
    SERVER,
    LlmError,
    ModelRequest,
    Usage,
)

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Sent as max_tokens when nothing is configured and the model is not known: a
# local server's own default is often "until the context is full", which a
# small model reaches by repeating itself in a tool call.
DEFAULT_MAX_OUTPUT_TOKENS = 4096


# --- request -----------------------------------------------------------------------------


def _text_of(message: Mapping[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message.get("content", ()) if b.get("type") == "text")


def _user_content(message: Mapping[str, Any]) -> str | list[dict[str, Any]]:
    """Text, or text and `image_url` parts (data URLs) when the message holds images."""
    blocks = message.get("content", ())
    if not any(b.get("type") == "image" and b.get("data") for b in blocks):
        return _text_of(message)
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "text" and b.get("text"):
            parts.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image" and b.get("data"):
            parts.append({"type": "image_url", "image_url": {"url": f"data:{b['mediaType']};base64,{b['data']}"}})
    return parts


def to_openai_messages(system: str, messages: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        role = message.get("role")
        if role == "user":
            out.append({"role": "user", "content": _user_content(message)})
        elif role == "assistant":
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": b.get("arguments") or "{}"},
                }
                for b in message.get("content", ())
                if b.get("type") == "tool-call"
            ]
            text = _text_of(message)
            if not text and not calls:
                continue  # content-less replies are not part of the history (R5.2 in docs/agent-loop.md)
            # "" rather than null: llama-cpp-python rejects a null content with HTTP 500.
            turn: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                turn["tool_calls"] = calls
            out.append(turn)
        elif role == "tool":
            out.append({"role": "tool", "tool_call_id": message["callId"], "content": _text_of(message)})
    return out


def build_request_body(request: ModelRequest, *, max_tokens_field: str = "max_tokens") -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "messages": to_openai_messages(request.system, request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]},
            }
            for t in request.tools
        ]
    if request.max_tokens is not None:
        body[max_tokens_field] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop:
        body["stop"] = list(request.stop)
    if "reasoningEffort" in request.options:
        body["reasoning_effort"] = request.options["reasoningEffort"]
    extra = request.options.get("extraBody")
    if isinstance(extra, Mapping):
        # Extra keys for a particular server; a None value removes a default key
        # (e.g. {"stream_options": None} for a server that rejects it).
        for key, value in extra.items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = value
    return body


# --- response stream ---------------------------------------------------------------------


def normalise_usage(usage: Mapping[str, Any]) -> Usage:
    out: Usage = {
        "inputTokens": int(usage.get("prompt_tokens") or 0),
        "outputTokens": int(usage.get("completion_tokens") or 0),
    }
    prompt = usage.get("prompt_tokens_details") or {}
    if prompt.get("cached_tokens") is not None:
        out["cacheReadTokens"] = int(prompt["cached_tokens"])
    elif usage.get("prompt_cache_hit_tokens") is not None:  # DeepSeek
        out["cacheReadTokens"] = int(usage["prompt_cache_hit_tokens"])
    if prompt.get("cache_write_tokens") is not None:
        out["cacheWriteTokens"] = int(prompt["cache_write_tokens"])
    completion = usage.get("completion_tokens_details") or {}
    if completion.get("reasoning_tokens") is not None:
        out["reasoningTokens"] = int(completion["reasoning_tokens"])
    return out


class _Call:
    __slots__ = ("id", "name", "pending", "started")

    def __init__(self, call_id: str | None, name: str | None):
        self.id = call_id
        self.name = name
        self.pending: list[str] = []  # argument fragments seen before the name
        self.started = False


class OpenAIStream:
    """Chat Completions chunks (the `data:` payloads) -> stream chunk dicts."""

    def __init__(self, ctx: StreamContext):
        self._ctx = ctx
        self._open: str | None = None  # "text" | "reasoning"
        self._calls: list[_Call] = []
        self._by_index: dict[Any, _Call] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._has_text = False
        self._refusal: list[str] = []
        self.done = False  # saw `data: [DONE]`
        self._events = 0

    def _switch(self, kind: str | None, out: list[dict[str, Any]]) -> None:
        if self._open == kind:
            return
        if self._open is not None:
            out.append({"type": f"{self._open}-end"})
        if kind is not None:
            out.append({"type": f"{kind}-start"})
        self._open = kind

    def _fail(self, code: str, message: str) -> LlmError:
        failure: dict[str, Any] = {"code": code, "message": redact(message, self._ctx.secrets),
                                   "provider": self._ctx.provider, "model": self._ctx.model}
        if self._ctx.request_id:
            failure["requestId"] = self._ctx.request_id
        return LlmError(failure)  # type: ignore[arg-type]

    def feed(self, data: str) -> list[dict[str, Any]]:
        self._events += 1
        if data.startswith("[DONE]"):
            self.done = True
            return []
        try:
            payload = parse_json(data)
        except ValueError:
            raise self._fail(SERVER, f"malformed JSON in a stream event: {data[:200]!r}") from None
        if not isinstance(payload, dict):
            raise self._fail(SERVER, f"unexpected stream event: {data[:200]!r}")
        if payload.get("error"):
            raise LlmError(
                classify_stream_error(
                    payload,
                    provider=self._ctx.provider,
                    model=self._ctx.model,
                    request_id=self._ctx.request_id,
                    secrets=self._ctx.secrets,
                )
            )
        out: list[dict[str, Any]] = []
        usage = payload.get("usage")
        if usage:
            self._usage = normalise_usage(usage)
        for choice in payload.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # only the first choice is ever requested
            delta = choice.get("delta")
            if delta:
                self._delta(delta, out)
            reason = choice.get("finish_reason")
            if reason:
                self._finish_reason = reason
        return out

    def _delta(self, delta: Mapping[str, Any], out: list[dict[str, Any]]) -> None:
        content = delta.get("content")
        if len(delta) == 1 and self._has_text and self._open == "text" and type(content) is str and content:
            out.append({"type": "text-delta", "text": content})  # the hot path: one more text fragment
            return
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning and isinstance(reasoning, str):
            self._switch("reasoning", out)
            out.append({"type": "reasoning-delta", "text": reasoning})
        if content and isinstance(content, str):
            self._switch("text", out)
            out.append({"type": "text-delta", "text": content})
            if not self._has_text and not content.isspace():
                self._has_text = True
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            self._refusal.append(refusal)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            for position, call in enumerate(tool_calls):
                self._tool_delta(call, position, out)
        elif delta.get("function_call"):  # the deprecated single-call form
            self._tool_delta({"index": 0, "function": delta["function_call"]}, 0, out)

    def _tool_delta(self, fragment: Mapping[str, Any], position: int, out: list[dict[str, Any]]) -> None:
        index = fragment.get("index")
        key = index if isinstance(index, int) else position
        function = fragment.get("function") or {}
        call_id = fragment.get("id") or None
        name = function.get("name") or None
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments)  # some servers send an object
        call = self._by_index.get(key)
        # Ollama sends each call whole at index 0: a new id at a known index is a new call.
        if call is None or (call_id and call.id and call_id != call.id):
            call = _Call(call_id, name)
            self._calls.append(call)
            self._by_index[key] = call
        else:
            # Set once, never concatenated: some servers repeat id and name on every fragment.
            if call_id and not call.id:
                call.id = call_id
            if name and not call.name:
                call.name = name
        if not call.started and call.name:
            self._start_call(call, out)
        if arguments:
            if call.started:
                out.append({"type": "tool-call-delta", "id": call.id, "delta": arguments})
            else:
                call.pending.append(arguments)

    def _start_call(self, call: _Call, out: list[dict[str, Any]]) -> None:
        self._switch(None, out)
        if not call.id:
            call.id = f"call_{uuid.uuid4().hex[:24]}"
        call.started = True
        out.append({"type": "tool-call-start", "id": call.id, "name": call.name or ""})
        if call.pending:
            out.append({"type": "tool-call-delta", "id": call.id, "delta": "".join(call.pending)})
            call.pending.clear()

    def end(self) -> list[dict[str, Any]]:
        """The closing chunks, ending with `finish`; raises on a failed stream."""
        if not self.done and self._finish_reason is None:
            if not self._events:
                # llama-cpp-python answers some errors (context overflow among them) this way.
                raise self._fail(NETWORK, "the server closed the stream without sending anything")
            raise self._fail(NETWORK, "the stream ended before its end ([DONE] missing)")
        out: list[dict[str, Any]] = []
        self._switch(None, out)
        for call in self._calls:
            if not call.started:
                self._start_call(call, out)
            out.append({"type": "tool-call-end", "id": call.id})
        if self._usage is not None:
            out.append({"type": "usage", "usage": self._usage})
        reason = self._finish_reason
        if reason == "content_filter":
            raise self._fail(CONTENT_FILTER, "the response was blocked by the provider's content filter")
        if reason == "length":
            out.append({"type": "finish", "kind": "max-tokens"})
        elif self._calls:
            out.append({"type": "finish", "kind": "tool-calls"})
        elif self._refusal and not self._has_text:
            raise self._fail(REFUSAL, "".join(self._refusal))
        elif not self._has_text:
            raise self._fail(EMPTY_RESPONSE, "the model returned no content")
        else:
            out.append({"type": "finish", "kind": "stop"})
        return out


# --- provider ----------------------------------------------------------------------------


class OpenAIProvider(ProbedWindows):
    """A Chat Completions endpoint. One pooled httpx client per instance."""

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        name: str = "openai",
        headers: Mapping[str, str] | None = None,
        timeouts: Timeouts = Timeouts(),
        auth_hint: str = "",
        endpoint_hint: str = "",
        model_hint: str = "",
        endpoint: Endpoint | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        max_tokens_field: str | None = None,
        top_p: float | None = None,
        stop: list[str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        prompt_cache_key: bool | None = None,
    ):
        self.name = name
        self.base_url = base_url
        self._url = join_url(base_url, "chat/completions")
        self._api_key = api_key
        self._timeouts = timeouts
        self._auth_hint = auth_hint
        self._hints = {"endpoint_hint": endpoint_hint, "model_hint": model_hint}
        self.endpoint = endpoint or Endpoint(base_url)
        self._context_window = context_window
        self._max_output_tokens = max_output_tokens
        self._body_defaults = {"top_p": top_p, "stop": list(stop or [])}
        self._extra_body = dict(extra_body or {})
        # OpenAI's reasoning models reject the deprecated `max_tokens`; most other servers only know it.
        self._is_openai = (urlsplit(base_url).hostname or "").endswith("openai.com")
        # Other servers may reject an unknown key, so by default only OpenAI's own gets it.
        self._prompt_cache_key = self._is_openai if prompt_cache_key is None else prompt_cache_key
        if max_tokens_field is None:
            max_tokens_field = "max_completion_tokens" if self._is_openai else "max_tokens"
        self.max_tokens_field = max_tokens_field
        self._headers = {"Accept": "text/event-stream", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._secrets = tuple(s for s in (api_key, *(headers or {}).values()) if s)
        secrets.register(api_key)
        secrets.register_headers(headers or {})
        self._http = PooledClient(timeouts)
        # Servers other than OpenAI's are asked the window they run a model with
        # (which may be less than the model's own, e.g. Ollama's default).
        self.windows = WindowProbe(base_url, lambda: self._http.client, self._headers,
                                   enabled=not self._is_openai and not context_window)

    def __repr__(self) -> str:
        return f"OpenAIProvider(name={self.name!r}, base_url={self.base_url!r})"

    async def _discover(self, model: str) -> None:
        """The window before a request: a probe under way is waited for a moment
        (`FIRST_REQUEST_WAIT_S`), then the request goes with what is known and
        the probe's answer serves the next one."""
        await self.context_window_within(model, FIRST_REQUEST_WAIT_S)

    def _default_max_tokens(self, model: str) -> int:
        """max_tokens when none is configured: the model's known limit, at most
        a quarter of the context window (the prompt needs the rest)."""
        info = self.model_info(model)
        limit = info.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        if info.context_window:
            limit = min(limit, max(256, info.context_window // 4))
        return limit

    async def stream(self, request: ModelRequest) -> AsyncIterator[dict[str, Any]]:
        await self._discover(request.model)
        body = build_request_body(request, max_tokens_field=self.max_tokens_field)
        body.setdefault(self.max_tokens_field, self._default_max_tokens(request.model))
        apply_body_settings(body, self._body_defaults, {**self._extra_body, **(request.options.get("extraBody") or {})})
        if self._prompt_cache_key and request.session_id and "prompt_cache_key" not in body:
            # Routes a session's requests to the same cache machine, so its stable prefix is found again.
            body["prompt_cache_key"] = request.session_id
        ctx = StreamContext(self.name, request.model, self._auth_hint, self._secrets, **self._hints)
        state = OpenAIStream(ctx)
        events = stream_sse(self._http.client, self._url, body=body, headers=self._headers, timeouts=self._timeouts, ctx=ctx)

        def feed(event: SseEvent) -> list[dict[str, Any]]:
            if event.event == "error":  # a few servers name their error events
                payload = _json_or_none(event.data)
                raise LlmError(
                    classify_stream_error(
                        payload if isinstance(payload, dict) else {"error": {"message": event.data}},
                        provider=self.name,
                        model=request.model,
                        request_id=ctx.request_id,
                        secrets=self._secrets,
                    )
                )
            return state.feed(event.data)

        try:
            async for chunk in normalise(events, state, feed):
                yield chunk
        except LlmError as error:
            self.endpoint.annotate(error)
            if error.failure.get("code") == MODEL_UNAVAILABLE:
                await name_listed_models(error.failure, self.list_models)  # type: ignore[arg-type]
            raise

    async def list_models(self) -> list[str]:
        """The models the endpoint lists (`GET <base>/models`); ModelListError if it does not."""
        return await list_model_ids(self._http.client, join_url(self.base_url, "models"), self._headers)

    async def aclose(self) -> None:
        await self._http.aclose()


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
