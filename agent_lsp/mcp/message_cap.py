"""What one message from an MCP server may cost us: at most `LIMIT_BYTES`.

MCP messages are lines (stdio, and the `data:` lines of an HTTP event
stream) or a whole HTTP body. `LineCap` passes them through as they come,
holding at most one message of up to `LIMIT_BYTES`; a longer one is not kept:
it is read to its end counting its bytes, keeping only its first `HEAD_BYTES`
and last `TAIL_BYTES`, and replaced by a short message of our own:

- an answer to a tool call (a `result` with `content`) becomes an error tool
  result whose first block says how many bytes the server sent and that it
  was cut, followed by the first `KEPT_CHARS` characters of its first text;
- any other answer becomes a JSON-RPC error saying the same;
- a request or notification of the server is dropped (there is nobody to answer).

The answer's `id` is read from the start or the end of the message (where
servers put it: `{"jsonrpc", "id", "result"}` or `{"result", "jsonrpc", "id"}`);
a message whose id is in neither place is dropped, and its request waits for
its timeout.

Only the standard library: `launcher.py`, which relays a stdio server's
output through a `LineCap`, loads this file by its path.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

LIMIT_BYTES = 4 * 1024 * 1024
HEAD_BYTES = 1024 * 1024
TAIL_BYTES = 4096
KEPT_CHARS = 100_000

_JSONRPC = rb'(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
_ID_VALUE = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_HEAD_ID = re.compile(rb'\s*\{\s*' + _JSONRPC + rb'"id"\s*:\s*' + _ID_VALUE)
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID_VALUE + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')
_IS_CALL = re.compile(rb'\s*\{\s*' + _JSONRPC + rb'(?:"id"\s*:\s*' + _ID_VALUE + rb'\s*,\s*)?"method"')
_TOOL_TEXT = re.compile(rb'"content"\s*:\s*\[\s*\{[^{}]*?"text"\s*:\s*"')
_IS_TOOL_RESULT = re.compile(rb'"result"\s*:\s*\{[^{}]*?"content"\s*:\s*\[')
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


class LineCap:
    """Lines in (`feed`, as bytes arrive; `end` at the end of the stream), lines
    out (`write`), each at most `limit` bytes; see the module's docstring."""

    def __init__(self, write: Callable[[bytes], Any], limit: int = LIMIT_BYTES, *, lines: bool = True):
        self.write = write
        self.limit = limit
        self.lines = lines  # False: the whole stream is one message (an HTTP body of JSON)
        self.cut = 0  # how many messages were cut so far
        self._line = bytearray()
        self._over = False
        self._total = 0
        self._head = b""
        self._tail = b""

    def feed(self, data: bytes) -> None:
        if not self.lines:
            self._part(data)
            return
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            self._part(data[start:] if newline < 0 else data[start:newline])
            if newline < 0:
                return
            self._finish(b"\n")
            start = newline + 1

    def end(self) -> None:
        if self._line or self._over:
            self._finish(b"")

    def _part(self, part: bytes) -> None:
        if self._over:
            self._total += len(part)
            self._tail = (self._tail + part[-TAIL_BYTES:])[-TAIL_BYTES:]
            return
        self._line += part
        if len(self._line) > self.limit:
            self._over = True
            self._total = len(self._line)
            self._head = bytes(self._line[:HEAD_BYTES])
            self._tail = bytes(self._line[-TAIL_BYTES:])
            self._line = bytearray()  # given back now, not when the message ends

    def _finish(self, newline: bytes) -> None:
        if self._over:
            replacement = cut_message(self._head, self._tail, self._total, self.limit)
            self.cut += 1
            self._over, self._head, self._tail, self._total = False, b"", b"", 0
            if replacement is not None:
                self.write(replacement + newline)
            return
        line, self._line = bytes(self._line), bytearray()
        self.write(line + newline)


def cut_message(head: bytes, tail: bytes, total: int, limit: int) -> bytes | None:
    """The message that stands for one of `total` bytes (its first and last bytes
    given); None when there is nothing to answer."""
    prefix = b""
    if head.startswith(b"data:"):  # a line of an event stream
        prefix, head = b"data: ", head[5:].lstrip(b" ")
    if _IS_CALL.match(head):
        return None
    found = _HEAD_ID.match(head) or _TAIL_ID.search(tail.rstrip(b"\r"))
    if found is None:
        return None
    message_id = json.loads(found.group(1))
    note = (f"[The MCP server's answer was {total:,} bytes, over the limit of {limit:,} bytes per message: "
            f"it was cut.")
    text = _first_text(head) if _IS_TOOL_RESULT.search(head) else None
    if text is not None:
        note += f" Only the first {len(text):,} characters of its text are kept below.]"
        result = {"content": [{"type": "text", "text": note}, {"type": "text", "text": text}],
                  "isError": True, "resultType": "complete"}  # an error: its structured content, if any, is gone
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id, "result": result}
    else:
        message = {"jsonrpc": "2.0", "id": message_id, "error": {"code": -32603, "message": note + "]"}}
    return prefix + json.dumps(message, ensure_ascii=False).encode("utf-8")


def _first_text(head: bytes) -> str | None:
    """The start of the first text block of a tool result, as far as `head` has it."""
    found = _TOOL_TEXT.search(head)
    if found is None:
        return None
    rest = head[found.end():]
    whole = _STRING_REST.match(rest)
    raw = rest[: whole.end() - 1] if whole is not None else rest
    for trim in range(8):  # a cut escape (\u12) or UTF-8 sequence at the end
        try:
            return str(json.loads(b'"' + raw[: len(raw) - trim] + b'"'))[:KEPT_CHARS]
        except ValueError:
            continue
    return None
