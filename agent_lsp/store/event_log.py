"""A session's events by seq, with the stream chunks of finished messages kept on disk only.

A long session is mostly `assistant/chunk` events: one per streamed delta.
In memory they matter only while their message streams; once the
`assistant/message` (or the end of its step) is committed, the model history,
the inbox and every other reader of the log use the message, and only a
replay needs the chunks. So a log backed by a session file keeps, per
finished chunk, only its line's byte offset and its merge kind (two array
slots) and reads the event from the file when asked: `log[seq]` and
iteration give a `StoredEvent` whose `time` and `data` are read on first
use, so a reader that only filters on `type` never touches the disk.

A log without a file (a session that lives in memory only) keeps every event.
"""

from __future__ import annotations

import bisect
import json
import re
from array import array
from collections import defaultdict
from itertools import accumulate
from pathlib import Path
from typing import Any, Callable, Iterator

from agent_lsp.store.event import MESSAGE, Event
from agent_lsp.store.seq_runs import compact_source_seqs

CHUNK = "assistant/chunk"
# Events that end a streamed message: its chunks are released when one commits.
MESSAGE_DONE = frozenset({"assistant/message", "step/end", "turn/end"})
READ_BLOCK = 256  # events read from the file at once for one released event
READ_SEGMENT = 4096  # events read from the file at once by a walk over a range
# Merge kinds: consecutive deltas of one kind are one replayed event.
NOT_MERGEABLE = 0
TEXT_DELTA = 1
REASONING_DELTA = 2
UNKNOWN = 255  # the kind of a line not looked at yet
_KINDS = {"text-delta": TEXT_DELTA, "reasoning-delta": REASONING_DELTA}
_KIND_OF_TYPE: defaultdict[bytes, int] = defaultdict(int, {k.encode(): v for k, v in _KINDS.items()})
# A chunk line's own type, as a reader that does not parse the line sees it.
_CHUNK_TYPES = re.compile(rb'"chunk":\{"type":"([^"\\]*)"')
_TEXT_MARK = b'"chunk":{"type":"text-delta"'
_REASONING_MARK = b'"chunk":{"type":"reasoning-delta"'
_PLUS_ONE = (1).__add__


def chunk_kind(event: Event) -> int:
    if event.type != CHUNK:
        return NOT_MERGEABLE
    return _KINDS.get((event.data.get("chunk") or {}).get("type"), NOT_MERGEABLE)


def line_kind(line: bytes) -> int:
    """The merge kind of an unparsed chunk line."""
    if line.find(_TEXT_MARK) > 0:
        return TEXT_DELTA
    if line.find(_REASONING_MARK) > 0:
        return REASONING_DELTA
    return NOT_MERGEABLE


class UnreadableEventError(Exception):
    """A released event could not be read back from its session file."""


class StoredEvent(Event):
    """An event of the log that lives in the session file (a chunk); `time` and
    `data` are read from it on first use. Made on every access (cheap: one per
    event a reader walks past), never kept by the log."""

    __slots__ = ("_log", "_loaded")
    type = CHUNK  # type: ignore[assignment]  # every released event is a chunk

    def __init__(self, log: "EventLog", seq: int):  # noqa: D107 - fields come from the file
        self._log = log
        self._loaded = None
        self.seq = seq

    def _load(self) -> Event:
        if self._loaded is None:
            self._loaded = self._log.read(self.seq)
        return self._loaded

    @property  # type: ignore[override]
    def time(self) -> int:
        return self._load().time

    @property  # type: ignore[override]
    def data(self) -> dict[str, Any]:
        return self._load().data

    def to_json(self) -> dict[str, Any]:
        return self._load().to_json()


class EventLog:
    """`log[i].seq == i`. Appends go through `Session`; see the module docstring."""

    __slots__ = ("_items", "_kinds", "_offsets", "_path", "_tracking", "_flush", "_streaming", "_block",
                 "_gap_starts", "_gap_stops")

    def __init__(self) -> None:
        self._items: list[Event | None] = []  # None: released to the file
        self._kinds = bytearray()  # merge kind per seq
        self._offsets = array("q")  # start of each event's line in the file, then the end of the last
        self._path: Path | None = None  # the session file released events are read from
        self._tracking = False  # appends are lines of that file (their offsets are known)
        self._flush: Callable[[], None] | None = None  # writes buffered lines before a read
        self._streaming: list[int] = []  # chunks still in memory, of the message that streams
        self._block: tuple[int, list[Event]] = (0, [])  # the events last read one by one, and their neighbours
        # Runs of chunk lines a load left unread: their kinds are UNKNOWN and their
        # offsets -1 until a reader needs them (`know`), edges known.
        self._gap_starts: list[int] = []
        self._gap_stops: dict[int, int] = {}

    @classmethod
    def from_file(cls, path: Path, items: list[Event | None], kinds: bytearray, offsets: array,
                  gaps: list[tuple[int, int]]) -> "EventLog":
        """A log read from `path`: released events (None) are read from it on use;
        `gaps` are the (start, stop) seq ranges of lines not looked at yet."""
        log = cls()
        log._items, log._kinds, log._offsets, log._path = items, kinds, offsets, path
        log._gap_starts = [a for a, _ in gaps]
        log._gap_stops = dict(gaps)
        return log

    # ----------------------------------------------------------------- growth

    def append(self, event: Event, line_bytes: int | None = None) -> None:
        """Add the next event; `line_bytes` is the length of its line in the file
        (None when it has no line there)."""
        self._items.append(event)
        kind = event.type
        if kind == CHUNK:
            self._kinds.append(chunk_kind(event))
        else:
            self._kinds.append(NOT_MERGEABLE)
            if kind == MESSAGE:  # its line is written: memory may hold its chunk seqs as runs
                compact_source_seqs(event.data)
        if not self._tracking:
            return
        if line_bytes is None:
            self.detach()
            return
        offsets = self._offsets
        offsets.append(offsets[-1] + line_bytes + 1)
        if kind == CHUNK:
            self._streaming.append(event.seq)
        elif kind in MESSAGE_DONE and self._streaming:
            items = self._items
            for seq in self._streaming:
                items[seq] = None
            self._streaming.clear()

    def attach(self, path: Path, offsets: array, flush: Callable[[], None] | None, *, release: bool = True) -> None:
        """Back the log by its session file: `offsets` are those of every event
        in the log now (plus the end). From here each message's chunks are
        released once it is done; with `release`, the chunks of finished
        messages the log holds now are released too (a log read by
        `SessionStore` holds none: its chunk lines were never parsed)."""
        if len(offsets) != len(self._items) + 1:
            raise ValueError(f"{len(offsets) - 1} line offsets for {len(self._items)} events")
        self._path, self._offsets, self._flush, self._tracking = path, offsets, flush, True
        items = self._items
        streaming = []
        for seq in range(len(items) - 1, -1, -1):  # the chunks after the last finished message stream still
            e = items[seq]
            if e is None or e.type in MESSAGE_DONE:
                break
            if e.type == CHUNK:
                streaming.append(seq)
        self._streaming = streaming[::-1]
        if release:
            still = set(streaming)
            for seq, e in enumerate(items):
                if e is not None and e.type == CHUNK and seq not in still:
                    items[seq] = None

    def detach(self) -> None:
        """Stop tracking lines (the file is no longer appended to); released
        events stay readable while the file exists."""
        self._tracking = False
        self._streaming = []
        self._flush = None

    # ---------------------------------------------------------------- reading

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return EventRange(self, range(*index.indices(len(self._items))))
        if index < 0:
            index += len(self._items)
        if not 0 <= index < len(self._items):
            raise IndexError("event index out of range")
        return self._event(index)

    def _event(self, seq: int) -> Event:
        event = self._items[seq]
        return event if event is not None else StoredEvent(self, seq)

    def __iter__(self) -> Iterator[Event]:
        return self._walk(range(len(self._items)))

    def __reversed__(self) -> Iterator[Event]:
        return self._walk(range(len(self._items) - 1, -1, -1))

    def _walk(self, seqs: range) -> Iterator[Event]:
        items = self._items
        for seq in seqs:
            event = items[seq]
            yield event if event is not None else StoredEvent(self, seq)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (EventLog, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def held(self, start: int = 0, *, reverse: bool = False) -> Iterator[Event]:
        """The events held in memory (every event but the chunks of finished
        messages) from seq `start` on, in seq order or newest first: what a
        reader that looks for other events than chunks walks."""
        held = self._items[start:]  # a copy: appends while the reader walks are not seen, as before
        if reverse:
            held.reverse()
        return filter(None, held)  # an Event is never false: this drops the released (None) ones

    def held_range(self, start: int, stop: int) -> bool:
        """Whether every event `start..stop-1` is held in memory."""
        return all(e is not None for e in self._items[start:stop])

    def in_memory(self) -> int:
        """How many events are held in memory (the others are in the file)."""
        return sum(1 for e in self._items if e is not None)

    @property
    def kinds(self) -> bytearray:
        """The merge kind per seq; UNKNOWN in a run of lines not looked at yet (`know`)."""
        return self._kinds

    def know(self, seq: int) -> None:
        """Make the kind and offset of `seq` (and of its run of unread lines) known."""
        if self._kinds[seq] != UNKNOWN:
            return
        i = bisect.bisect_right(self._gap_starts, seq) - 1
        start = self._gap_starts.pop(i)
        stop = self._gap_stops.pop(start)
        raw = self._read_bytes(start, stop)
        lines = raw.split(b"\n")[: stop - start]
        ends = array("q", accumulate(map(_PLUS_ONE, map(len, lines)), initial=self._offsets[start]))
        if len(lines) != stop - start or ends[-1] != self._offsets[stop]:
            raise UnreadableEventError(f"{self._path}: events {start}..{stop - 1} are not whole lines of the file")
        self._offsets[start:stop] = ends[:-1]
        types = _CHUNK_TYPES.findall(raw)  # one per line when every line has the usual shape
        if len(types) == len(lines):
            self._kinds[start:stop] = bytes(map(_KIND_OF_TYPE.__getitem__, types))
        else:
            self._kinds[start:stop] = bytes(map(line_kind, lines))

    @property
    def offsets(self) -> array:
        return self._offsets

    def read(self, seq: int) -> Event:
        """One event; a released one is read with its neighbours (a reader that
        walks the log reads each block of the file once)."""
        event = self._items[seq]
        if event is not None:
            return event
        start, block = self._block
        if not start <= seq < start + len(block):
            start = seq - seq % READ_BLOCK
            block = self.read_range(start, min(start + READ_BLOCK, len(self._items)))
            self._block = (start, block)
        return block[seq - start]

    def read_range(self, start: int, end: int) -> list[Event]:
        """Events `start..end-1`, released ones read from the file."""
        return list(self.iter_range(start, end))

    def iter_range(self, start: int, end: int) -> Iterator[Event]:
        """Events `start..end-1` in order; released ones are read from the file a
        segment at a time (at most READ_SEGMENT events parsed and held at once)."""
        items = self._items
        seq = start
        while seq < end:
            event = items[seq]
            if event is not None:
                yield event
                seq += 1
                continue
            stop = seq + 1
            limit = min(end, seq + READ_SEGMENT)
            while stop < limit and items[stop] is None:
                stop += 1
            yield from self._read_lines(seq, stop)
            seq = stop

    def _read_bytes(self, start: int, stop: int) -> bytes:
        """The lines of events `start..stop-1` (their edges' offsets known)."""
        if self._flush is not None:
            self._flush()
        path = self._file()
        offsets = self._offsets
        try:
            with open(path, "rb") as f:
                f.seek(offsets[start])
                return f.read(offsets[stop] - offsets[start])
        except OSError as e:
            raise UnreadableEventError(f"events {start}..{stop - 1} of {path}: {e}") from None

    def raw_lines(self, start: int, stop: int) -> bytes:
        """The file's lines of events `start..stop-1` (released ones), newline-ended."""
        self.know(start)
        self.know(stop - 1)
        return self._read_bytes(start, stop)

    def _read_lines(self, start: int, stop: int) -> list[Event]:
        path = self._path
        raw = self.raw_lines(start, stop)
        try:  # one parse for the segment; line by line only to name a bad line
            objs = json.loads(b"[" + raw[:-1].replace(b"\n", b",") + b"]")
            events = [Event(o["seq"], o["time"], o["type"], o["data"]) for o in objs]
        except (ValueError, KeyError, TypeError):
            events = [self._parse(line, seq) for seq, line in zip(range(start, stop), raw.split(b"\n"))]
        for seq, event in zip(range(start, stop), events):
            if event.seq != seq:
                raise UnreadableEventError(f"{path}: line {seq + 2} holds seq {event.seq}, not {seq}")
        if len(events) != stop - start:
            raise UnreadableEventError(f"{path}: events {start}..{stop - 1} are not lines of the file")
        return events

    def _parse(self, line: bytes, seq: int) -> Event:
        try:
            obj = json.loads(line)
            return Event(int(obj["seq"]), int(obj["time"]), str(obj["type"]), obj["data"])
        except (ValueError, KeyError, TypeError) as e:
            raise UnreadableEventError(f"{self._path}: line {seq + 2}: {e}") from None

    def _file(self) -> Path:
        if self._path is None:
            raise UnreadableEventError("the session file of released events is unknown")
        return self._path


class EventRange:
    """A slice of an EventLog (`log[a:b]`): a sequence of its events that makes
    them as it is walked, like the log itself."""

    __slots__ = ("_log", "_seqs")

    def __init__(self, log: EventLog, seqs: range):
        self._log, self._seqs = log, seqs

    def __len__(self) -> int:
        return len(self._seqs)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return EventRange(self._log, self._seqs[index])
        return self._log[self._seqs[index]]

    def __iter__(self) -> Iterator[Event]:
        return self._log._walk(self._seqs)

    def __reversed__(self) -> Iterator[Event]:
        return self._log._walk(self._seqs[::-1])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (EventRange, EventLog, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
