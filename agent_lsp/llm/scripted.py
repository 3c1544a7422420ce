"""A scripted model provider for tests, the demo, and `agent-lsp run` with no
model configured.

The script is JSON (the LSP layer passes it from config): a list of replies,
one consumed per model call, in order. A reply is a dict:

    {"text": "hello"}                      text, one text-delta chunk per character
    {"reasoning": "hmm", "text": "hi"}     a reasoning block, then text
    {"text": "reading", "tools": [{"name": "read_file", "arguments": {"path": "a.py"}, "id": "c1"}]}
                                           tool calls ("id" optional; "arguments" a dict or raw JSON text)
    {"maxTokens": "cut"}                   text "cut", then finish max-tokens ("tools" may be added)
    {"hang": "partial"}                    stream "partial", then wait until cancelled;
                                           "reasoning", "usage" and "partialTool":
                                           {"name", "arguments": "<raw prefix>"} may be added
    {"fail": "RATE_LIMIT", "retryAfterMs": 5, "message": "…"}
                                           raise LlmError (after any "text" given; "phase" is passed on)
    {"inband": "CONTEXT_WINDOW_EXCEEDED"}  a terminal finish {kind: "error", failure} chunk
    {"chunks": [ {...}, … ]}               these exact chunks (e.g. only {"type": "finish", "kind": "stop"})
    {"text": "slow", "chunkDelayMs": 20}   per-reply delay between chunks
    {"usage": {"inputTokens": 10, "outputTokens": 2}}
                                           usage override (else an estimate: 4 characters a token)
    {"when": "fix the bug", "text": "…"}   for a request whose latest user message contains "fix the
                                           bug": such a request takes the first unused reply whose
                                           "when" fits, before any reply without one; a reply with
                                           "when" is never taken by a request it does not fit. So
                                           one script serves agents that run at once (a parent and
                                           its sub-agents, each with its own copy of the script)

A text or reasoning reply of n characters yields n + 2 chunks for the block,
then one `usage` and one `finish` chunk: "abc" gives 7 chunks.
Tests may also put a Python callable `fn(request) -> reply dict` in the list.
When the script is exhausted the model answers deterministically with
"(scripted model) You said: <the last user message's text>".
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Callable, Union

from agent_lsp.llm.types import LlmError, ModelInfo, ModelRequest, message_text

Reply = Union[dict[str, Any], Callable[[ModelRequest], dict[str, Any]]]


def _estimate_tokens(chars: int) -> int:
    return max(1, (chars + 3) // 4) if chars else 0


def _message_chars(m: dict[str, Any]) -> int:
    return sum(len(b.get("text") or b.get("arguments") or "") for b in m.get("content") or ())


class ScriptedProvider:
    def __init__(
        self,
        script: list[Reply] | None = None,
        *,
        name: str = "scripted",
        chunk_delay_s: float = 0.0,
        context_window: int | None = 128_000,
    ):
        self.name = name
        self.script: list[Reply] = list(script or [])
        self.chunk_delay_s = chunk_delay_s
        self.context_window = context_window
        self.requests: list[ModelRequest] = []
        self._next = 0  # replies before it are all used
        self._used: set[int] = set()
        self._scanned = 0  # replies checked for a "when"
        self._has_when = False
        self._call_counter = 0
        self._chars: dict[int, tuple[dict[str, Any], int]] = {}  # id(message) -> (message, chars)

    def _request_chars(self, request: ModelRequest) -> int:
        """Prompt size for the estimated usage; cached per message object
        (the agent resends the same message dicts every step)."""
        n = len(request.system)
        cache = self._chars
        if len(cache) > 50_000:
            cache.clear()  # bounded: it holds references to the messages
        for m in request.messages:
            hit = cache.get(id(m))
            if hit is None or hit[0] is not m:
                hit = (m, _message_chars(m))
                cache[id(m)] = hit
            n += hit[1]
        return n

    def add(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def model_info(self, model: str) -> ModelInfo:
        return ModelInfo(context_window=self.context_window)

    def _take(self, request: ModelRequest) -> dict[str, Any]:
        # The user's own words: not the editor-state snapshot the loop enters after them.
        last_user = next((m for m in reversed(request.messages)
                          if m.get("role") == "user" and m.get("source") != "runtime-context"), None)
        said = message_text(last_user) if last_user else ""
        while self._next < len(self.script) and self._next in self._used:
            self._next += 1
        if not self._conditional():
            unused = [self._next] if self._next < len(self.script) else []  # strictly in order
        else:
            unused = [i for i in range(self._next, len(self.script)) if i not in self._used]
        fitting = [i for i in unused if self._when(i) is not None and str(self._when(i)) in said]
        plain = [i for i in unused if self._when(i) is None]
        for index in (fitting or plain)[:1]:
            self._used.add(index)
            reply = self.script[index]
            return reply(request) if callable(reply) else reply
        return {"text": f"(scripted model) You said: {said}"}

    def _conditional(self) -> bool:
        """Whether any reply has a "when" (scanned once per reply, however long the script)."""
        if self._scanned < len(self.script):
            self._has_when = self._has_when or any(self._when(i) is not None for i in range(self._scanned, len(self.script)))
            self._scanned = len(self.script)
        return self._has_when

    def _when(self, index: int) -> Any:
        reply = self.script[index]
        return None if callable(reply) else reply.get("when")

    async def stream(self, request: ModelRequest) -> AsyncIterator[dict[str, Any]]:
        self.requests.append(request)
        reply = self._take(request)
        delay = reply.get("chunkDelayMs")
        delay_s = self.chunk_delay_s if delay is None else float(delay) / 1000.0
        out_chars = 0

        async def emit(chunk: dict[str, Any]) -> dict[str, Any]:
            if delay_s > 0:
                await asyncio.sleep(delay_s)
            return chunk

        if "chunks" in reply:
            for chunk in reply["chunks"]:
                yield await emit(dict(chunk))
            return

        reasoning = reply.get("reasoning")
        if reasoning:
            yield await emit({"type": "reasoning-start"})
            for ch in reasoning:
                yield await emit({"type": "reasoning-delta", "text": ch})
            yield await emit({"type": "reasoning-end"})
            out_chars += len(reasoning)

        text = reply.get("text")
        if "maxTokens" in reply:
            text = reply["maxTokens"]
        if "hang" in reply and isinstance(reply["hang"], str):
            text = reply["hang"]
        if text:
            yield await emit({"type": "text-start"})
            for ch in text:
                yield await emit({"type": "text-delta", "text": ch})
            yield await emit({"type": "text-end"})
            out_chars += len(text)

        if "fail" in reply:
            failure: dict[str, Any] = {"code": reply["fail"], "message": reply.get("message", f"scripted {reply['fail']}")}
            if "retryAfterMs" in reply:
                failure["providerRetryAfterMs"] = int(reply["retryAfterMs"])
            if "phase" in reply:
                failure["phase"] = str(reply["phase"])
            failure["provider"] = self.name
            failure["model"] = request.model
            raise LlmError(failure)  # type: ignore[arg-type]

        for tool in reply.get("tools") or ():
            self._call_counter += 1
            call_id = tool.get("id") or f"call_{self._call_counter}"
            args = tool.get("arguments", {})
            raw = args if isinstance(args, str) else json.dumps(args)
            yield await emit({"type": "tool-call-start", "id": call_id, "name": tool["name"]})
            yield await emit({"type": "tool-call-delta", "id": call_id, "delta": raw})
            yield await emit({"type": "tool-call-end", "id": call_id})
            out_chars += len(raw)

        if "hang" in reply:
            partial = reply.get("partialTool")
            if partial:
                self._call_counter += 1
                call_id = partial.get("id") or f"call_{self._call_counter}"
                yield await emit({"type": "tool-call-start", "id": call_id, "name": partial["name"]})
                yield await emit({"type": "tool-call-delta", "id": call_id, "delta": partial.get("arguments", "{")})
            if "usage" in reply:
                yield await emit({"type": "usage", "usage": dict(reply["usage"])})
            await _wait_aborted(request)
            yield {"type": "finish", "kind": "aborted", "failure": {"code": "ABORTED", "message": "aborted"}}
            return

        usage = reply.get("usage") or {
            "inputTokens": _estimate_tokens(self._request_chars(request)),
            "outputTokens": _estimate_tokens(out_chars),
        }
        yield await emit({"type": "usage", "usage": dict(usage)})
        if "inband" in reply:
            yield await emit(
                {"type": "finish", "kind": "error", "failure": {"code": reply["inband"], "message": f"scripted {reply['inband']}"}}
            )
            return
        if "maxTokens" in reply:
            kind = "max-tokens"
        elif reply.get("tools"):
            kind = "tool-calls"
        else:
            kind = "stop"
        yield await emit({"type": "finish", "kind": kind})


async def _wait_aborted(request: ModelRequest) -> None:
    """Hang until the request's signal aborts (or the consuming task is cancelled)."""
    signal = request.signal
    wait = getattr(signal, "wait", None)
    if wait is not None:
        await wait()
        return
    while signal is None or not signal.aborted:
        await asyncio.sleep(0.01)
