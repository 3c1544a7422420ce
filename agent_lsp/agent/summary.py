"""The summary call of a compaction (R10), in one request or in pieces.

When the conversation to summarise fits the window with the session's own
system prompt and tools, it is sent as it is, followed by the instruction:
that request shares its prefix with the conversation's, so a server's prompt
cache makes it cheap. When it does not fit (a small window, a long history),
it is summarised in pieces that do: each piece is the earlier pieces'
summary and the next messages written out as plain text, under a short
system prompt and with no tool schemas, and each piece's summary carries
into the next. A message too large for a piece on its own is cut to its
head and tail. Every piece takes at least one message, so the pieces end.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from agent_lsp.agent.context_budget import CHARS_PER_TOKEN, TokenEstimate, raw_text_tokens
from agent_lsp.agent.history import Assembler

if TYPE_CHECKING:
    from agent_lsp.agent.signal import CancelToken
    from agent_lsp.llm.types import ModelProvider, ModelRequest

SUMMARY_INSTRUCTION = (
    "Summarise the conversation so far for your own later use: the user's goals and constraints, decisions made, "
    "files read or changed and why, tool results that still matter, and the work that remains. Be concise and "
    "factual; do not call tools."
)
PIECE_SYSTEM = "You keep the working notes of a coding agent: you summarise its conversation for its own later use."
PIECE_INSTRUCTION = (
    "Write one summary of the earlier summary (if any) and the conversation above, for the agent's own later use: "
    "the user's goals and constraints, decisions made, files read or changed and why, tool results that still "
    "matter, and the work that remains. Be concise and factual."
)
CUT_MARKER = "\n[... cut ...]\n"
PIECE_MARGIN = 0.85  # of a piece's budget: the estimate is calibrated, not exact

class CompactionError(Exception):
    """A typed compaction failure: kind is busy, cancelled, changed, summary, commit or persistence."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(f"{kind}: {message}")


# (system, messages, tools, max_tokens) -> (summary text, usage or None)
ModelCall = Callable[[str, tuple[dict[str, Any], ...], tuple[Any, ...], "int | None"], Awaitable[tuple[str, Any]]]


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "id": "summary", "source": "compaction", "content": [{"type": "text", "text": text}]}


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    head = max(0, (max_chars - len(CUT_MARKER)) * 3 // 4)
    tail = max(0, max_chars - len(CUT_MARKER) - head)
    return text[:head] + CUT_MARKER + (text[-tail:] if tail else "")


def render(message: dict[str, Any]) -> str:
    """One model-history message as transcript text."""
    role = message.get("role")
    parts: list[str] = []
    for b in message.get("content") or ():
        kind = b.get("type")
        if kind == "text" and b.get("text"):
            parts.append(str(b["text"]))
        elif kind == "tool-call":
            parts.append(f"[calls {b.get('name')}({b.get('arguments') or ''})]")
    body = "\n".join(parts)
    if role == "tool":
        state = "error" if message.get("isError") else "result"
        return f"TOOL {state} of {message.get('name')}:\n{body}"
    if role == "assistant":
        return f"AGENT:\n{body}"
    return f"USER:\n{body}"


def _add_usage(total: dict[str, int] | None, usage: Any) -> dict[str, int] | None:
    if not usage:
        return total
    out = dict(total or {})
    for key, value in usage.items():
        if isinstance(value, int):
            out[key] = out.get(key, 0) + value
    return out


def fits_whole(estimate: TokenEstimate, system: str, tools: tuple[Any, ...], shadowed: list[dict[str, Any]],
               window: int | None, reserve: int) -> bool:
    """Whether the conversation, its fixed prompt and the instruction fit in one request."""
    if not window:
        return True  # nothing known: one request, as the server will judge
    raw = estimate.raw_request(system, tools, (), [*shadowed, _user(SUMMARY_INSTRUCTION)])
    return estimate.scale(raw) + reserve <= window


async def summarise(call: ModelCall, estimate: TokenEstimate, shadowed: list[dict[str, Any]], *, system: str,
                    tools: tuple[Any, ...], window: int | None, reserve: int,
                    max_tokens: int | None) -> tuple[str, Any, int]:
    """(summary, usage, requests) of `shadowed`: one request when it fits, else pieces."""
    if fits_whole(estimate, system, tools, shadowed, window, reserve):
        text, usage = await call(system, (*shadowed, _user(SUMMARY_INSTRUCTION)), tools, max_tokens)
        return text, usage, 1
    assert window is not None
    summary, usage, requests = "", None, 0
    at = 0
    while at < len(shadowed):
        frame = f"Earlier summary:\n{summary}\n\nConversation:\n" if summary else "Conversation:\n"
        fixed = raw_text_tokens(len(PIECE_SYSTEM) + len(frame) + len(PIECE_INSTRUCTION)) + 12
        budget = int((window - reserve) * PIECE_MARGIN) - estimate.scale(fixed)
        # What is left for messages, in characters at the calibrated ratio; at least something.
        room_chars = max(256, int(budget * CHARS_PER_TOKEN / estimate.ratio))
        texts: list[str] = []
        used = 0
        while at < len(shadowed):
            text = render(shadowed[at])
            if not texts and len(text) > room_chars:
                text = _cut(text, room_chars)
            if used + len(text) + 2 > room_chars and texts:
                break
            texts.append(text)
            used += len(text) + 2
            at += 1
            if used >= room_chars:
                break
        prompt = frame + "\n\n".join(texts) + "\n\n" + PIECE_INSTRUCTION
        summary, piece_usage = await call(PIECE_SYSTEM, (_user(prompt),), (), reserve)
        usage = _add_usage(usage, piece_usage)
        requests += 1
    return summary, usage, requests


async def stream_text(provider: "ModelProvider", request: "ModelRequest", signal: "CancelToken",
                      grace_s: float) -> tuple[str, Any]:
    """(text, usage) of one summary request; a cancel stops it (the stream gets `grace_s` to close)."""
    asm = Assembler()

    async def consume() -> None:
        async for chunk in provider.stream(request):
            asm.feed(chunk)
            if asm.finish is not None:
                return

    task = asyncio.ensure_future(consume())
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=grace_s)
        raise CompactionError("cancelled", "compaction was cancelled")
    exc = task.exception()
    if exc is not None:
        raise CompactionError("summary", str(exc)) from exc
    if asm.finish in ("error", "aborted"):
        raise CompactionError("summary", str((asm.failure or {}).get("message", "the summary call failed")))
    text = "".join(b["text"] for b in asm.content() if b.get("type") == "text")
    if not text.strip():
        raise CompactionError("summary", "the summary was empty")
    return text, asm.usage
