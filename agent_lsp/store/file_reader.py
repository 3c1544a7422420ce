"""Reading a session file into its header and its events: `read_log` (stream
chunk lines left unparsed until used, a torn last line repaired or left out)
and `read_events` (every line parsed, for a fork of a session not open here)."""

from __future__ import annotations

import json
import mmap
import os
import re
from array import array
from pathlib import Path
from typing import Any

from agent_lsp.store.event_log import UNKNOWN, EventLog, chunk_kind
from agent_lsp.store.file_format import HEADER_KIND, CorruptSessionError, event_of, parse_header, torn_copy_of
from agent_lsp.store.session import Event


# The newline before every event line that is not a stream chunk (and the last one).
_NOT_A_CHUNK_LINE = re.compile(rb'\n(?!\{"seq":\d+,"time":\d+,"type":"assistant/chunk",)')
_UNKNOWN_OFFSET = array("q", [-1])
_UNKNOWN_KIND = bytes([UNKNOWN])


def read_log(path: Path, *, repair_torn: bool) -> tuple[dict[str, Any], EventLog]:
    """The header and the events of a session file. Stream chunk lines are
    not parsed (`EventLog` reads them when used), which keeps a long
    session's load fast and small: a regular expression over the mapped
    file finds the other lines, and the chunk lines between two of them are
    counted (each seq must be its line's); chunk lines are parsed, and
    checked, when read."""
    with open(path, "rb") as f:
        head = f.readline()
    header = parse_header(path, head)
    if not head.endswith(b"\n") and repair_torn:
        with open(path, "ab") as f:
            f.write(b"\n")
    size = _whole_lines(path, repair_torn)
    items: list[Event | None] = []
    kinds = bytearray()
    offsets = array("q")
    gaps: list[tuple[int, int]] = []

    def unread(count: int, at: int) -> None:  # `count` chunk lines from byte `at`
        if count:
            gaps.append((len(items), len(items) + count))
            offsets.append(at)
            offsets.extend(_UNKNOWN_OFFSET * (count - 1))
            items.extend([None] * count)
            kinds.extend(_UNKNOWN_KIND * count)

    pos = len(head)  # where the next line not yet taken starts
    if size > pos:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as raw:
            for match in _NOT_A_CHUNK_LINE.finditer(raw, pos - 1, size):
                start = match.start() + 1
                if start >= size:
                    break
                end = raw.find(b"\n", start, size)
                unread(raw[pos:start].count(b"\n"), pos)
                try:
                    obj = json.loads(raw[start:end])
                    seq = int(obj["seq"])
                    if seq != len(items):
                        raise ValueError(f"seq {seq} where {len(items)} was expected")
                    event = event_of(obj, seq)
                except (ValueError, KeyError, TypeError, AttributeError) as e:
                    raise CorruptSessionError(path, len(items) + 2, f"invalid event line: {e}") from None
                items.append(event)
                kinds.append(chunk_kind(event))
                offsets.append(start)
                pos = end + 1
            unread(raw[pos:size].count(b"\n"), pos)
    offsets.append(max(size, pos))
    return header, EventLog.from_file(path, items, kinds, offsets, gaps)


def _whole_lines(path: Path, repair_torn: bool) -> int:
    """The size of the file's whole lines. A file whose last write was cut
    short ends without a newline: with `repair_torn` its last line is kept if
    it is a whole JSON object (a newline is added), else cut off (it was
    never acknowledged); without, it is left out."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return size
        back = min(size, 1 << 16)
        while True:  # the start of the last line
            f.seek(size - back)
            chunk = f.read(back)
            cut = chunk.rfind(b"\n")
            if cut >= 0 or back == size:
                cut = size - back + cut + 1
                break
            back = min(size, back * 4)
        f.seek(cut)
        tail = f.read()
    if not repair_torn:
        return cut
    try:
        whole = isinstance(json.loads(tail), dict)
    except ValueError:
        whole = False
    if not whole:  # the cut bytes are kept beside the file, for whoever looks into the crash
        with open(torn_copy_of(path), "ab") as copy:
            copy.write(tail + b"\n")
            copy.flush()
            os.fsync(copy.fileno())
    with open(path, "r+b") as f:
        if whole:
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
            return size + 1
        f.truncate(cut)
        return cut


def read_events(path: Path, *, repair_torn: bool) -> tuple[dict[str, Any], list[Event]]:
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    torn = lines[-1] != b""  # no final newline: the last write was cut short
    if not torn:
        lines.pop()
    if not lines:
        raise CorruptSessionError(path, 1, "empty file (no header)")
    try:
        header = json.loads(lines[0])
    except ValueError as e:
        raise CorruptSessionError(path, 1, f"invalid header: {e}") from None
    if not isinstance(header, dict) or header.get("kind") != HEADER_KIND:
        raise CorruptSessionError(path, 1, "not an agent_lsp session file")
    body = lines[1:]
    events = _parse_fast(body, torn)
    if events is None:
        events = _parse_slow(path, body, torn)
    good_bytes = len(lines[0]) + 1 + sum(len(line) + 1 for line in body[: len(events)])
    if torn and repair_torn:
        # Keep every complete line; the torn tail is lost (it was never acknowledged).
        with open(path, "r+b") as f:
            f.truncate(min(good_bytes, len(raw)))
            if good_bytes > len(raw):
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
    return header, events


def _parse_fast(body: list[bytes], torn: bool) -> list[Event] | None:
    """One json.loads over all lines; None when any line is bad (or torn)."""
    if torn or not body:
        return None if body else []
    try:
        objs = json.loads(b"[" + b",".join(body) + b"]")
        events = [Event(o["seq"], o["time"], o["type"], o["data"]) for o in objs]
    except (ValueError, KeyError, TypeError):
        return None
    for i, e in enumerate(events):
        if e.seq != i or not isinstance(e.type, str) or not isinstance(e.data, dict):
            return None
    return events


def _parse_slow(path: Path, body: list[bytes], torn: bool) -> list[Event]:
    """Line by line, to name the bad line; a torn last line is dropped."""
    events: list[Event] = []
    for n, line in enumerate(body, start=2):
        last = n == len(body) + 1
        try:
            obj = json.loads(line)
            event = Event.from_json(obj)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            if last and torn:
                break  # a torn tail line: truncated by the caller
            raise CorruptSessionError(path, n, f"invalid event line: {e}") from None
        if event.seq != len(events):
            raise CorruptSessionError(path, n, f"seq {event.seq} where {len(events)} was expected")
        events.append(event)
    return events
