"""Model history: the projection of the session surface (R1, R5), and
the assembler that folds stream chunks into an assistant message."""

from __future__ import annotations

import json

from typing import Any

from agent_lsp.store.session import Session

MESSAGE_EVENTS = frozenset({"user/message", "assistant/message", "tool/result"})


def derive_messages(session: Session) -> list[dict[str, Any]]:
    """Exactly what the model sees: each surface event's message, in surface
    order; content-less assistant messages are anchors only (R5.2).

    The projection is cached on the session and extended incrementally while
    the surface only grows; a positional replacement rebuilds it."""
    cache = getattr(session, "_derived_cache", None)
    surface = session.surface
    if cache is None or cache[0] != session.replace_generation or cache[1] > len(surface):
        cache = (session.replace_generation, 0, [])
    generation, done, out = cache
    events = session.events
    for seq in surface[done:]:
        message = events[seq].data.get("message")
        if message is None:
            continue
        if message.get("role") == "assistant" and not message.get("content"):
            continue
        out.append(message)
    session._derived_cache = (generation, len(surface), out)  # type: ignore[attr-defined]
    return list(out)


class Assembler:
    """Folds stream chunks into content blocks, usage and the finish."""

    __slots__ = ("blocks", "_open", "_calls", "usage", "finish", "failure")

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None  # the open text/reasoning block
        self._calls: dict[str, dict[str, Any]] = {}  # id -> tool-call block (+ "_closed")
        self.usage: dict[str, Any] | None = None
        self.finish: str | None = None
        self.failure: dict[str, Any] | None = None

    def feed(self, chunk: dict[str, Any]) -> None:
        t = chunk.get("type")
        if t == "text-delta" or t == "reasoning-delta":
            block = self._open
            if block is None:
                block = self._start("text" if t == "text-delta" else "reasoning")
            block["text"] += chunk.get("text", "")
        elif t == "text-start":
            self._start("text")
        elif t == "reasoning-start":
            self._start("reasoning")
        elif t == "text-end" or t == "reasoning-end":
            if self._open is not None:
                for key in ("signature", "redactedData"):
                    if key in chunk:
                        self._open[key] = chunk[key]
                self._open["_closed"] = True
            self._open = None
        elif t == "tool-call-start":
            block = {"type": "tool-call", "id": chunk.get("id"), "name": chunk.get("name"), "arguments": ""}
            self._calls[str(chunk.get("id"))] = block
            self.blocks.append(block)
        elif t == "tool-call-delta":
            block = self._calls.get(str(chunk.get("id")))
            if block is not None:
                block["arguments"] += chunk.get("delta", "")
        elif t == "tool-call-end":
            block = self._calls.get(str(chunk.get("id")))
            if block is not None:
                block["_closed"] = True
        elif t == "usage":
            self.usage = chunk.get("usage")
        elif t == "finish":
            self.finish = chunk.get("kind", "stop")
            if chunk.get("failure") is not None:
                self.failure = chunk["failure"]

    def _start(self, kind: str) -> dict[str, Any]:
        block: dict[str, Any] = {"type": kind, "text": ""}
        self._open = block
        self.blocks.append(block)
        return block

    @staticmethod
    def _clean(block: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in block.items() if k != "_closed"}

    def content(self, *, complete_calls_only: bool = False) -> list[dict[str, Any]]:
        """The message's blocks. `complete_calls_only` (a reply cut at the output
        limit): a tool call is kept only when its arguments are a whole JSON
        object; the call the limit cut short is dropped."""
        out = []
        for b in self.blocks:
            if b["type"] == "tool-call" and complete_calls_only and not _whole_arguments(b):
                continue
            out.append(self._clean(b))
        return out

    def visible_prefix(self) -> list[dict[str, Any]]:
        """The interrupted prefix (R5.5): text/reasoning blocks with
        non-whitespace content; tool calls, complete or partial, omitted."""
        return [self._clean(b) for b in self.blocks if b["type"] in ("text", "reasoning") and b["text"].strip()]

    def tool_calls(self) -> list[dict[str, Any]]:
        return [self._clean(b) for b in self.blocks if b["type"] == "tool-call"]


def _whole_arguments(call: dict[str, Any]) -> bool:
    """Whether a streamed call's arguments are complete: a closed call whose text
    parses as a JSON object (a cut one stops mid-value, or before it began)."""
    if not call.get("_closed"):
        return False
    arguments = call.get("arguments")
    if isinstance(arguments, dict):
        return True
    try:
        return isinstance(json.loads(arguments or ""), dict)
    except ValueError:
        return False
