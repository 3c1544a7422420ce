"""The text model every layer shares: LSP lines, positions, edits, decoding.

Positions follow the Editor port: (line, character) with characters counted
in code points, lines ended by "\\n", "\\r\\n" or "\\r" (the LSP line model).
This is the one implementation (docs/architecture.md says why it is ours and
not pygls'); conversion to the wire's position encodings is pygls'
`PositionCodec`, in the layers that may import pygls.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable

BINARY_SNIFF_BYTES = 8192


_EOL = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """Offsets where each line begins, with LSP line terminators."""
    if "\r" not in text:
        starts = [0]
        i = text.find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = text.find("\n", i + 1)
        return starts
    return [0] + [m.end() for m in _EOL.finditer(text)]


def position_of(starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect.bisect_right(starts, offset) - 1
    return line, offset - starts[line]


def offset_of(text: str, starts: list[int], position: tuple[int, int]) -> int:
    """The offset of a position; a character past a line's end clamps to it (as LSP says)."""
    line, character = position
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    if text.endswith("\r\n", start, end):
        end -= 2
    elif text.endswith(("\r", "\n"), start, end):
        end -= 1
    return min(start + character, end)


def line_content(text: str, starts: list[int], line: int) -> str:
    """The text of `line` without its line end ("" past the last line)."""
    if line >= len(starts):
        return ""
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    return text[starts[line] : end].rstrip("\r\n")


class OverlappingEdits(ValueError):
    """Two replacements of one edit overlap, or one ends before it starts."""


def replace_spans(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, new text) span replaced; every span refers to
    `text` as given. As in LSP, inserts at one position keep their order in
    `spans` (and come before a replacement starting there); overlaps are refused."""
    ordered = []
    for index, (start, end, new) in enumerate(spans):
        if end < start:
            raise OverlappingEdits(f"range end before start in edit {index}")
        ordered.append((start, end, index, new))
    ordered.sort()
    parts: list[str] = []
    cursor = 0
    for start, end, index, new in ordered:
        if start < cursor:
            raise OverlappingEdits(f"edit {index} overlaps an earlier edit")
        parts.append(text[cursor:start])
        parts.append(new)
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


@dataclass(frozen=True)
class Decoded:
    text: str
    lossy: bool  # invalid UTF-8 was replaced with U+FFFD


def decode(data: bytes) -> Decoded:
    try:
        return Decoded(data.decode("utf-8"), False)
    except UnicodeDecodeError:
        return Decoded(data.decode("utf-8", errors="replace"), True)


def split_keepends(text: str) -> list[str]:
    """Lines with their terminators (LSP line model); a final newline adds no empty line."""
    starts = line_starts(text)
    bounds = starts + [len(text)]
    lines = [text[bounds[i] : bounds[i + 1]] for i in range(len(starts))]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def split_lines(text: str) -> list[str]:
    """Lines without terminators (LSP line model)."""
    return [line.rstrip("\r\n") for line in split_keepends(text)]
