"""Pieces of one line of a transcript, shared by every view that prints one."""

from __future__ import annotations

import json
from typing import Any

from agent_lsp.visible import visible_name

ARGUMENT_CHARS = 120  # of a tool call's arguments, on its line
SUMMARY_CHARS = 100  # of a summary on a line of its own (a tool call, a failure)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shorten(text: str, width: int = SUMMARY_CHARS) -> str:
    """`text` on one line: whitespace collapsed, cut at `width`."""
    return cut(" ".join(text.split()), width)


def first_line(text: str, default: str = "") -> str:
    """The first line of `text` (a failure's reason), `default` when it has none."""
    return text.strip().splitlines()[0] if text.strip() else default


def failure_text(failure: dict[str, Any]) -> str:
    """A failure as `CODE message` (the caller trims what it does not need)."""
    return f"{failure.get('code', '')} {failure.get('message', '')}"


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
    return shorten(text, limit)


def _name(value: Any) -> str:
    """A path argument as shown: one line, its line breaks and controls escaped."""
    return visible_name(str(value))


def tool_call_summary(name: str, arguments: str) -> str:
    """`read_file stats.py:1-20`, `run_command pytest -q`, ... from the raw JSON arguments."""
    try:
        args = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return shorten(f"{name} {arguments}")
    if not isinstance(args, dict):
        return shorten(f"{name} {arguments}")
    if "command" in args:
        return shorten(f"{name} {args['command']}")
    if "path" in args and "newPath" in args:
        return shorten(f"{name} {_name(args['path'])} -> {_name(args['newPath'])}")
    if "pattern" in args:
        where = f" in {_name(args['path'])}" if args.get("path") else ""
        return shorten(f"{name} {args['pattern']!r}{where}")
    if "path" in args:
        detail = _name(args["path"])
        if args.get("startLine") or args.get("endLine"):
            detail += f":{args.get('startLine', 1)}-{args.get('endLine', '')}"
        if isinstance(args.get("edits"), list):
            count = len(args["edits"])
            detail += f" ({count} edit{'s' if count != 1 else ''})"
        return shorten(f"{name} {detail}")
    return shorten(f"{name} {json.dumps(args, ensure_ascii=False)}" if args else name)
