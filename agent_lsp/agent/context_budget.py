"""How many tokens a request takes, without a tokenizer (R10).

Text is counted as characters / 4, the rule of thumb for English and code,
and that raw count is then calibrated by what the server reported: after
each reply the ratio of its `inputTokens` to the raw count of the request it
answered is kept, so a model whose tokenizer cuts code finer (or coarser)
is measured by its own figures from the second request on. A rejected
request that names its size (llama.cpp's `n_prompt_tokens`) calibrates too.

The budget of a request is the context window less the room kept for the
reply (`output_reserve`): a prompt that fills the window leaves the model no
room to answer, and some servers reject prompt + max_tokens over the window.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # role and framing tokens of one message
TOOL_OVERHEAD = 8  # the framing of one tool's schema
DEFAULT_OUTPUT_RESERVE = 4096  # a reply's room when no max_tokens is configured (the providers' default)
MAX_OUTPUT_RESERVE = 16_384
# A calibration outside these is a mismeasure, not a tokenizer; below 1 the
# estimate would undercount, and undercounting is what gets a request rejected.
RATIO_BOUNDS = (0.8, 4.0)
MIN_CALIBRATION_TOKENS = 256  # a smaller request's count is mostly framing: too noisy to learn from


def raw_text_tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def raw_message_tokens(message: dict[str, Any]) -> int:
    """The raw (uncalibrated) tokens of one model-history message."""
    n = 0
    for b in message.get("content") or ():
        n += len(b.get("text") or "") + len(b.get("arguments") or "") + len(b.get("name") or "")
    return MESSAGE_OVERHEAD + raw_text_tokens(n)


def raw_envelope_tokens(system: str, tools: Sequence[Any]) -> int:
    """The raw tokens of the fixed prompt: the system prompt and every tool schema."""
    chars = len(system or "")
    for tool in tools or ():
        chars += len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False, default=str))
    return MESSAGE_OVERHEAD + raw_text_tokens(chars) + TOOL_OVERHEAD * len(tools or ())


def output_reserve(window: int, max_tokens: int | None, model_max_output: int | None = None) -> int:
    """Tokens kept free for the reply: what the request asks for (or the
    providers' default), never more than a quarter of the window."""
    wanted = max_tokens or min(model_max_output or DEFAULT_OUTPUT_RESERVE, DEFAULT_OUTPUT_RESERVE)
    return max(1, min(wanted, MAX_OUTPUT_RESERVE, window // 4))


class TokenEstimate:
    """Raw counts times the ratio the server's own counts taught."""

    def __init__(self) -> None:
        self.ratio = 1.0
        self.calibrated = False

    def observe(self, actual: int, raw: int) -> None:
        """The server counted `actual` tokens where we counted `raw`."""
        if actual <= 0 or raw < MIN_CALIBRATION_TOKENS:
            return
        low, high = RATIO_BOUNDS
        self.ratio = min(high, max(low, actual / raw))
        self.calibrated = True

    def scale(self, raw: int) -> int:
        return int(raw * self.ratio + 0.999)

    @staticmethod
    def raw_of_event(event: Any) -> int:
        """Raw tokens of a surface node's message (none for a node without one, or an empty one)."""
        message = event.data.get("message") or {}
        return raw_message_tokens(message) if message.get("content") else 0

    def raw_request(self, system: str, tools: Sequence[Any], events: Iterable[Any],
                    extra: Iterable[dict[str, Any]] = ()) -> int:
        """Raw tokens of a request: the fixed prompt, the surface `events` and
        the messages about to enter (`extra`)."""
        return (raw_envelope_tokens(system, tools) + sum(self.raw_of_event(e) for e in events)
                + sum(raw_message_tokens(m) for m in extra))


class SurfaceTally:
    """The raw tokens of a session's surface, kept up to date by adding what
    was appended since the last look; a replacement (compaction, rewind)
    makes it count afresh."""

    def __init__(self) -> None:
        self._state = (-1, 0, 0)  # (replace generation, surface length, raw tokens)

    def raw(self, session: Any) -> int:
        generation, counted, total = self._state
        surface = session.surface
        if generation != session.replace_generation or counted > len(surface):
            counted, total = 0, 0
        events = session.events
        for seq in surface[counted:]:
            total += TokenEstimate.raw_of_event(events[seq])
        self._state = (session.replace_generation, len(surface), total)
        return total
