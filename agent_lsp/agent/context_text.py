"""How a message's context item (a selection, a diagnostic, a file the editor
attached, with its text or only named) reads to the model. Code is shown as code with the place it came
from, not as a JSON object; an item of another shape stays JSON.

The text goes inside `<context>` … `</context>`, which clients recognise and
show as a chip instead of as something the user wrote."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlparse


def context_text(item: dict[str, Any]) -> str:
    code = item.get("text")
    uri = item.get("uri")
    if item.get("kind") in ("selection", "diagnostic") and isinstance(code, str) and isinstance(uri, str):
        where = f"{_place(uri)}, {_lines(item.get('range'))}".rstrip(", ")
        if item["kind"] == "diagnostic":
            head = f"The diagnostic {json.dumps(str(item.get('message', '')), ensure_ascii=False)} in {where}:"
        else:
            head = f"Selected code in {where}:"
        return f"{head}\n{_fenced(code)}"
    if item.get("kind") == "file" and isinstance(uri, str) and not item.get("range"):
        if isinstance(code, str):
            return f"The file {_place(uri)}, as the user's editor has it:\n{_fenced(code)}"
        note = item.get("note")
        return f"The user points at the file {_place(uri)}" + (f" ({note})." if isinstance(note, str) and note else ".")
    return json.dumps(item, ensure_ascii=False)


def _fenced(code: str) -> str:
    fence = "````" if "```" in code else "```"
    return f"{fence}\n{code.rstrip(chr(10))}\n{fence}"


def _place(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _lines(range_: Any) -> str:
    """1-based lines; an end at column 0 of a later line does not count that line."""
    try:
        start = range_["start"]["line"] + 1
        end = range_["end"]["line"] + 1
        if range_["end"].get("character") == 0 and end > start:
            end -= 1
    except (TypeError, KeyError):
        return ""
    return f"line {start}" if start == end else f"lines {start}–{end}"
