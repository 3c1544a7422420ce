"""Pieces of one line of a transcript, shared by every view that prints one."""

from __future__ import annotations

import json
from typing import Any

ARGUMENT_CHARS = 120  # of a tool call's arguments, on its line


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_arguments(raw: Any, limit: int = ARGUMENT_CHARS) -> str:
    """A tool call's arguments on one line: their values, whitespace collapsed, cut at `limit`."""
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        parsed = raw
    if isinstance(parsed, dict):
        text = " ".join(str(v) if isinstance(v, (str, int, float)) else json.dumps(v) for v in parsed.values())
    else:
        text = "" if parsed is None else str(parsed)
    return cut(" ".join(text.split()), limit)
