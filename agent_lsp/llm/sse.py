"""Incremental Server-Sent Events decoder: bytes in, events out.

Network reads split the stream anywhere: mid-line, between the `\\r` and `\\n`
of a CRLF, inside a multi-byte UTF-8 character. The decoder buffers until a
line is complete, accepts `\\n`, `\\r\\n` and `\\r` line ends, drops comment
lines (keep-alives), joins multi-line `data:` with `\\n`, and emits an event
at each blank line (WHATWG "event stream interpretation").
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Any

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(slots=True)
class SseEvent:
    event: str | None  # the `event:` field; None when absent
    data: str
    id: str | None = None


class SseDecoder:
    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""  # text after the last complete line
        self._skip_lf = False  # the previous chunk ended in "\r": a leading "\n" belongs to it
        self._event: str | None = None
        self._data: list[str] = []
        self._last_id: str | None = None
        self._at_start = True

    def feed(self, chunk: bytes) -> list[SseEvent]:
        text = self._utf8.decode(chunk)
        if not text:
            return []
        if self._at_start:
            self._at_start = False
            if text[0] == "\ufeff":  # a byte order mark is not part of the first line
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
        if self._partial:
            text = self._partial + text
        if "\r" in text:
            if text[-1] == "\r":
                # The line is complete, but a "\n" may follow in the next chunk.
                self._skip_lf = True
            lines = _LINE_END.split(text)
        else:
            lines = text.split("\n")
        self._partial = lines.pop()
        events: list[SseEvent] = []
        data = self._data
        for line in lines:
            # Fast path for the two lines nearly every event is made of.
            if line[:6] == "data: ":
                data.append(line[6:])
            elif not line and data:
                events.append(SseEvent(self._event, data[0] if len(data) == 1 else "\n".join(data), self._last_id))
                data.clear()
                self._event = None
            else:
                self._line(line, events)
        return events

    def close(self) -> list[SseEvent]:
        """End of stream: an unterminated last line counts; an event with no
        blank line after it is dropped (as browsers do), so a cut stream
        never yields a half event."""
        events: list[SseEvent] = []
        tail = self._partial + self._utf8.decode(b"", final=True)
        self._partial = ""
        if tail:
            self._line(tail, events)
        return events

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:
            if self._data:
                events.append(SseEvent(self._event, "\n".join(self._data), self._last_id))
                self._data.clear()
            self._event = None
            return
        if line[0] == ":":
            return  # comment / keep-alive
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        # "retry" and unknown fields are ignored: reconnection is not ours to do.


_scan_json = json.JSONDecoder().scan_once


def parse_json(data: str) -> Any:
    """`json.loads` for event payloads, minus two Python call layers (this is
    the hot path of every stream). Raises ValueError on malformed JSON."""
    try:
        value, end = _scan_json(data, 0)
    except StopIteration:
        return json.loads(data)  # leading whitespace, or raises the proper error
    if end != len(data) and data[end:].strip():
        raise ValueError(f"extra data after JSON at {end}")
    return value
