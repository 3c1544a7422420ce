"""Session files: one `<id>.jsonl` per session in one directory.

Line 1 is a header `{"kind": "agent_lsp.session", "version", "id", "created",
"title", "meta"}` (a fork adds "parentSession" and "seedLength"); every other
line is one event `{"seq","time","type","data"}`.
Loading repairs a torn last line (a crash mid-write) by truncating it (the
cut bytes are kept in `<id>.jsonl.torn`), closes
an open turn (R11.3 in docs/agent-loop.md) and marks the resume with `session/end-seed`.
A corrupt file raises `CorruptSessionError` naming its path and line; `list()`
skips such files and reports them in `list_errors`.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import secrets
import threading
import time
import weakref
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from agent_lsp.store import files as session_files
from agent_lsp.store import lock as session_lock
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.store.event_log import UNKNOWN, EventLog, chunk_kind
from agent_lsp.store.event import MESSAGE
from agent_lsp.store.message_text import user_text
from agent_lsp.store.search_index import SearchIndex
from agent_lsp.store.seq_runs import compact_source_seqs
from agent_lsp.store.repair import repair_events
from agent_lsp.store.session import Event, JsonlWriter, Session, now_ms

HEADER_KIND = "agent_lsp.session"
TITLE_MAX = 80


def torn_copy_of(path: Path) -> Path:
    """Where the torn last lines cut off a session file are kept (not a `.jsonl`: never listed)."""
    return path.with_name(path.name + ".torn")


class CorruptSessionError(Exception):
    def __init__(self, path: Path, line: int, reason: str):
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


def parse_header(path: Path, head: bytes) -> dict[str, Any]:
    """A session file's first line as its header; CorruptSessionError (line 1) if it is none."""
    if not head.strip():
        raise CorruptSessionError(path, 1, "empty file (no header)" if not head else "no header")
    try:
        header = json.loads(head)
    except ValueError as e:
        raise CorruptSessionError(path, 1, f"invalid header: {e}") from None
    if not isinstance(header, dict) or header.get("kind") != HEADER_KIND:
        raise CorruptSessionError(path, 1, "not an agent_lsp session file")
    return header


@dataclass(frozen=True)
class SessionSummary:
    id: str
    title: str | None
    created: int  # epoch ms
    updated: int  # epoch ms
    turns: int
    event_count: int
    path: Path | None = None
    parent: str | None = None  # the session this one was forked from
    meta: dict[str, Any] = field(default_factory=dict)  # the header's meta
    usage: dict[str, Any] | None = None  # the session's token total as its last turn/end recorded it
    size: int = 0  # bytes of the file when summarised


def new_session_id() -> str:
    return f"s_{int(time.time() * 1000):x}_{secrets.token_hex(4)}"


def _title_of(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1] + "…"


def _session_title(message: dict[str, Any]) -> str:
    """The title of a session from its first user message: the sender's own words."""
    own = user_text(message)
    if own.strip():
        return _title_of(own)
    return _title_of(_context_only_title(message.get("context")))


def _context_only_title(context: Any) -> str:
    """The title of a message with no words, only context (a file or selection sent as is)."""
    names: list[str] = []
    for item in context if isinstance(context, list) else ():
        uri = item.get("uri") if isinstance(item, dict) else None
        if isinstance(uri, str) and uri.rstrip("/"):
            name = unquote(uri.rstrip("/").rsplit("/", 1)[-1])
            if name not in names:
                names.append(name)
    return f"(context only: {', '.join(names)})" if names else "(context only)"


def _open_turn(events: list[Event]) -> int | None:
    """The number of the turn left open at the end of `events`, if any."""
    for e in reversed(events):
        if e.type == "turn/end":
            return None
        if e.type == "turn/start":
            return int(e.data.get("turn", 0))
    return None


@dataclass(frozen=True)
class _Scan:
    """What a session file's event lines say, up to byte `covered` (the end of
    the whole lines read): what a listing shows, and what continuing the read
    past `covered` needs."""
    covered: int
    titled: str | None  # the last session/title
    title: str | None  # the header's title, else the first user message's
    turns: int
    count: int  # event lines
    updated: int | None  # the last event's time
    usage: dict[str, Any] | None  # sessionUsage of the last turn/end


def _scan_lines(path: Path, raw: "mmap.mmap | bytes", before: _Scan) -> _Scan:
    """`before` continued with the whole event lines of `raw` from byte
    `before.covered` on (a torn last line is left to load() to repair)."""
    body = before.covered
    end = raw.rfind(b"\n", body) + 1
    if end <= body:
        return before
    lines = raw[body - 1:end]  # the newline before them included (mmap has no count())
    count = lines.count(b"\n") - 1
    # A cheap shape check (every line the writer makes has it), so an obviously
    # damaged file is reported here; load() checks fully. A raw newline is never
    # inside a JSON line, so the first line's start, the last one's end and one
    # count of the boundaries between lines (each a line's end and the next one's
    # start) check every line, in one pass over the bytes.
    if not (lines.startswith(b'\n{"seq":') and lines.endswith(b"}\n")
            and lines.count(b'}\n{"seq":') == count - 1):
        at = body
        while at < end:
            stop = raw.find(b"\n", at, end)
            if not (raw[at:at + 7] == b'{"seq":' and raw[stop - 1:stop] == b"}"):
                raise CorruptSessionError(path, _line_number(raw, at), "invalid event line")
            at = stop + 1

    def line_at(pos: int) -> tuple[int, Any]:
        start = raw.rfind(b"\n", body - 1, pos) + 1
        try:
            return start, json.loads(raw[start:raw.find(b"\n", pos, end)])
        except ValueError:
            raise CorruptSessionError(path, _line_number(raw, start), "invalid event line") from None

    def field(pos: int, *keys: str) -> Any:
        start, obj = line_at(pos)
        try:
            for key in keys:
                obj = obj[key]
            return obj
        except (KeyError, TypeError):
            raise CorruptSessionError(path, _line_number(raw, start), "invalid event line") from None

    titled = before.titled
    at = raw.rfind(b'"type":"session/title"', body, end)
    if at >= 0:
        titled = str(field(at, "data", "title"))
    title = before.title
    if title is None:
        at = raw.find(b'"type":"user/message"', body, end)
        if at >= 0:
            title = _session_title(field(at, "data", "message"))
    usage = before.usage
    at = raw.rfind(b'"type":"turn/end"', body, end)
    if at >= 0:
        start = raw.rfind(b"\n", body - 1, at) + 1
        has_usage = raw.find(b'"sessionUsage"', start, raw.find(b"\n", at, end)) >= 0
        usage = field(at, "data", "sessionUsage") if has_usage else None
    try:
        updated = int(field(end - 1, "time"))
    except (ValueError, TypeError):
        raise CorruptSessionError(path, _line_number(raw, end - 1), "invalid event line") from None
    return _Scan(end, titled, title, before.turns + lines.count(b'"type":"turn/start"'),
                 before.count + count, updated, usage)


def _line_number(raw: "mmap.mmap | bytes", at: int) -> int:
    return raw[:at].count(b"\n") + 1


RECORD_VERSION = 1
_MARK_BYTES = 32


def _mark(raw: "mmap.mmap | bytes", covered: int) -> str:
    """The bytes before `covered`: a file whose end read before is not there any more was rewritten."""
    return raw[max(0, covered - _MARK_BYTES):covered].hex()


def _grown_from(record: dict[str, Any] | None, st: os.stat_result, head: str, raw: "mmap.mmap | bytes") -> bool:
    """Whether the file is the one `record` was made of, with lines appended:
    the same inode and header line, and the bytes it ended with still there
    (session files only grow; a file replaced, cut or rewritten is read whole)."""
    if record is None or record["file"][0] != st.st_ino or record["head"] != head:
        return False
    covered = record["scan"]["covered"]
    return covered <= len(raw) and _mark(raw, covered) == record["mark"]


def _parse_record(text: str | None) -> dict[str, Any] | None:
    """A saved summary record, None when absent, of another version or damaged (the file is then read whole)."""
    if text is None:
        return None
    try:
        record = json.loads(text)
        if not (isinstance(record, dict) and record.get("v") == RECORD_VERSION and isinstance(record.get("header"), dict)
                and isinstance(record.get("file"), list) and len(record["file"]) == 3
                and isinstance(record.get("head"), str) and isinstance(record.get("mark"), str)):
            return None
        _Scan(**record["scan"])  # a TypeError when its fields are not these
        return record
    except (ValueError, TypeError, KeyError):
        return None


# The newline before every event line that is not a stream chunk (and the last one).
_NOT_A_CHUNK_LINE = re.compile(rb'\n(?!\{"seq":\d+,"time":\d+,"type":"assistant/chunk",)')
_UNKNOWN_OFFSET = array("q", [-1])
_UNKNOWN_KIND = bytes([UNKNOWN])


def event_of(obj: Any, seq: int) -> Event:
    event = Event(int(obj["seq"]), int(obj["time"]), obj["type"], obj["data"])
    if not isinstance(event.type, str) or not isinstance(event.data, dict):
        raise TypeError("an event needs a string type and an object data")
    if event.seq != seq:
        raise ValueError(f"seq {event.seq} where {seq} was expected")
    if event.type == MESSAGE:
        compact_source_seqs(event.data)
    return event


class SessionStore:
    """`lock=True`: every session this store opens (create, load, fork) is
    locked for this process until closed (`agent_lsp.store.lock`); opening one
    that another live process holds raises `SessionLockedError`."""

    def __init__(self, directory: Path, fsync: bool = False, *, lock: bool = False, lock_holder: str | None = None):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.lock = lock
        self.lock_holder = lock_holder  # the window of a multi-window process this store serves
        self._live: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
        # per file: (mtime, size) when summarised, the summary, the record saved for it
        self._summary_cache: dict[str, tuple[tuple[int, int], SessionSummary, dict[str, Any] | None]] = {}
        self._listing = threading.Lock()  # list() runs on a worker thread
        self.list_errors: list[CorruptSessionError] = []
        self.index = SearchIndex(self.directory)

    def path_of(self, session_id: str) -> Path:
        if not session_id or "/" in session_id or "\\" in session_id or session_id.startswith("."):
            raise ValueError(f"invalid session id: {session_id!r}")
        return self.directory / f"{session_id}.jsonl"

    def lock_path_of(self, session_id: str) -> Path:
        return self.path_of(session_id).with_suffix(".lock")

    def holder_of(self, session_id: str) -> int | None:
        """The pid of the live process that has the session open (this one included), if any."""
        return session_lock.holder_pid(self.lock_path_of(session_id), self.lock_holder)

    def _acquire(self, session_id: str) -> "session_lock.SessionLock | None":
        return session_lock.acquire(self.lock_path_of(session_id), session_id, self.lock_holder) if self.lock else None

    @staticmethod
    def _hold(session: Session, handle: "session_lock.SessionLock | None") -> None:
        """The session keeps its lock until closed (or collected)."""
        if handle is not None:
            session.lock = handle
            weakref.finalize(session, handle.release)

    # ----------------------------------------------------------------- create

    def create(self, title: str | None = None, meta: dict[str, Any] | None = None) -> Session:
        session_id = new_session_id()
        path = self.path_of(session_id)
        created = now_ms()
        header = {"kind": HEADER_KIND, "version": 1, "id": session_id, "created": created, "title": title, "meta": meta or {}}
        handle = self._acquire(session_id)
        header_line = (json.dumps(header, ensure_ascii=False) + "\n").encode("utf-8")
        with open(path, "xb") as f:
            f.write(header_line)
        session = Session(session_id, writer=JsonlWriter(path, fsync=self.fsync), meta=meta, created=created)
        session.events.attach(path, array("q", [len(header_line)]), session.flush)
        self._hold(session, handle)
        if title:
            session.meta.setdefault("title", title)
        self._live[session_id] = session
        return session

    # ------------------------------------------------------------------- load

    def load(self, session_id: str) -> Session:
        """The live session if this store has it open; otherwise a cold load
        with torn-line repair, crash repair and a `session/end-seed` marker."""
        live = self._live.get(session_id)
        if live is not None and not live.closed:
            return live
        path = self.path_of(session_id)
        if not path.exists():
            raise FileNotFoundError(f"no session {session_id} at {path}")
        handle = self._acquire(session_id)  # before the repair below writes to the file
        try:
            session = self._load_locked(session_id, path)
        except BaseException:
            if handle is not None:
                handle.release()
            raise
        self._hold(session, handle)
        return session

    def _load_locked(self, session_id: str, path: Path) -> Session:
        header, events = self._read_log(path, repair_torn=True)
        inherited = header.get("seedLength")
        if inherited is not None and (not isinstance(inherited, int) or not 0 <= inherited <= len(events)):
            raise CorruptSessionError(path, 1, f"invalid seedLength {inherited!r}")
        session = Session(
            session_id,
            events,
            writer=JsonlWriter(path, fsync=self.fsync),
            meta=header.get("meta") or {},
            created=int(header.get("created") or now_ms()),
            resumed=True,
            parent_session=header.get("parentSession"),
            inherited_length=inherited or 0,
        )
        events.attach(path, events.offsets, session.flush, release=False)
        if header.get("title"):
            session.meta.setdefault("title", header["title"])
        last_time = events[-1].time if events else now_ms()
        for type_, data in repair_events(events):
            session.append(type_, data, time=last_time)
        self._seal_seed(session)
        self._live[session_id] = session
        return session

    @staticmethod
    def _seal_seed(session: Session) -> None:
        """Mark where the seed ends (R11.4) and write it out."""
        events = session.events
        if not events or events[-1].type != "session/end-seed":
            session.append("session/end-seed", {"seedLength": len(events)})
        session.seed_length = len(session.events)
        session.flush()

    def snapshot(self, session_id: str) -> tuple[dict[str, Any], EventLog]:
        """(header, events) as on disk now, for reading only: no lock, no repair
        (a torn last line, e.g. another process mid-write, is left out)."""
        return self._read_log(self.path_of(session_id), repair_torn=False)

    def _read_log(self, path: Path, *, repair_torn: bool) -> tuple[dict[str, Any], EventLog]:
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
        size = self._whole_lines(path, repair_torn)
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

    @staticmethod
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

    # ------------------------------------------------------------------- fork

    def fork(self, source_id: str, boundary: int | None = None, *, title: str | None = None,
             meta: dict[str, Any] | None = None) -> Session:
        """A new session seeded with the source's events `0..boundary` (a seq;
        default: all of them), R11.5. The prefix must not end inside an
        open turn (ValueError). The child records `parentSession` and
        `seedLength` in its header, continues the turn numbering, and starts
        with an empty inbox (the parent's pending work stays the parent's).
        The source is read, never modified."""
        live = self._live.get(source_id)
        if live is not None and not live.closed:
            source_events, source_meta = live.events, live.meta
        else:
            header, source_events = self._read(self.path_of(source_id), repair_torn=False)
            source_meta = header.get("meta") or {}
        n = len(source_events) if boundary is None else boundary + 1
        if not 0 <= n <= len(source_events):
            raise ValueError(f"fork boundary {boundary} is outside session {source_id} (0..{len(source_events) - 1})")
        copied = source_events.read_range(0, n) if isinstance(source_events, EventLog) else source_events[:n]
        prefix = [Event(e.seq, e.time, e.type, e.data) for e in copied]
        open_turn = _open_turn(prefix)
        if open_turn is not None:
            raise ValueError(f"fork boundary {boundary} of session {source_id} is inside open turn {open_turn}")
        child_meta = {k: v for k, v in source_meta.items() if k != "title"}
        child_meta.update(meta or {})
        session_id = new_session_id()
        path = self.path_of(session_id)
        created = now_ms()
        handle = self._acquire(session_id)
        header = {"kind": HEADER_KIND, "version": 1, "id": session_id, "created": created, "title": title,
                  "meta": child_meta, "parentSession": source_id, "seedLength": n}
        lines = [(json.dumps(header, ensure_ascii=False) + "\n").encode("utf-8")]
        lines += [(json.dumps(e.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
                  for e in prefix]
        with open(path, "xb") as f:
            f.write(b"".join(lines))
        offsets = array("q", [0])
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        session = Session(session_id, prefix, writer=JsonlWriter(path, fsync=self.fsync), meta=child_meta,
                          created=created, resumed=True, parent_session=source_id, inherited_length=n)
        session.events.attach(path, offsets[1:], session.flush)
        session_files.copy(session_files.files_dir(self.path_of(source_id)), session_files.files_dir(path),
                           session_files.referenced(prefix))
        if title:
            session.meta.setdefault("title", title)
        self._hold(session, handle)
        self._seal_seed(session)
        self._live[session_id] = session
        return session

    def _read(self, path: Path, *, repair_torn: bool) -> tuple[dict[str, Any], list[Event]]:
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
        events = self._parse_fast(body, torn)
        if events is None:
            events = self._parse_slow(path, body, torn)
        good_bytes = len(lines[0]) + 1 + sum(len(line) + 1 for line in body[: len(events)])
        if torn and repair_torn:
            # Keep every complete line; the torn tail is lost (it was never acknowledged).
            with open(path, "r+b") as f:
                f.truncate(min(good_bytes, len(raw)))
                if good_bytes > len(raw):
                    f.seek(0, os.SEEK_END)
                    f.write(b"\n")
        return header, events

    @staticmethod
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

    @staticmethod
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

    # ------------------------------------------------------------------- list

    def list(self) -> list[SessionSummary]:
        """Every session's summary, the most recently updated first. A file
        unchanged since it was last summarised (here, or by any server: the
        records saved in the index file) is not read; one that grew is read
        from where its record ends; any other is read whole."""
        with self._listing:
            return self._list()

    def _list(self) -> list[SessionSummary]:
        summaries: list[SessionSummary] = []
        errors: list[CorruptSessionError] = []
        saved: dict[str, str] | None = None  # read on the first file not summarised in this process
        changed: dict[str, str] = {}
        present: set[str] = set()
        for path in self.directory.glob("*.jsonl"):
            present.add(path.stem)
            try:
                st = path.stat()
                key = (st.st_mtime_ns, st.st_size)
                cached = self._summary_cache.get(path.stem)
                if cached is not None and cached[0] == key:
                    summaries.append(cached[1])
                    continue
                if cached is not None:
                    before = cached[2]
                else:
                    if saved is None:
                        saved = self.index.saved_summaries()
                    before = _parse_record(saved.get(path.stem))
                summary, record = self._summarise(path, st, before)
                self._summary_cache[path.stem] = (key, summary, record)
                if record is not None and record is not before:
                    changed[path.stem] = json.dumps(record, ensure_ascii=False)
                summaries.append(summary)
            except CorruptSessionError as e:
                errors.append(e)
            except OSError:
                continue  # deleted while listing
        gone = {sid for sid in list(self._summary_cache) if sid not in present}  # a copy: delete() pops meanwhile
        for sid in gone:
            self._summary_cache.pop(sid, None)
        gone.update(sid for sid in saved or () if sid not in present)
        if changed or gone:
            self.index.save_summaries(changed, gone)
        self.list_errors = errors
        summaries.sort(key=lambda s: (s.updated, s.created), reverse=True)
        return summaries

    def prepare_search(self) -> None:
        """What the next listing and search would read first: every changed
        file's summary, and the text every grown file gained."""
        self._update_index(self.list())

    def search(self, query: str, summaries: list[SessionSummary]) -> dict[str, str | None]:
        """The sessions among `summaries` (from `list()`) in which every word of
        `query` is in the title or the text of a message (any case), each with an
        excerpt of the message text around the longest word it has (None when
        only the title has the words). The index is brought up to date first."""
        words = query.casefold().split()
        if not words:
            return {s.id: None for s in summaries}
        self._update_index(summaries)
        kept = {s.id for s in summaries}
        matches: dict[str, dict[str, int]] = {}  # word -> session id -> the row of its first message with it
        for word in words:
            matches[word] = self.index.first_matches(word)
            kept &= matches[word].keys() | {s.id for s in summaries if word in (s.title or "").casefold()}
            if not kept:
                return {}
        found: dict[str, str | None] = dict.fromkeys(kept)
        missing = set(kept)
        for word in sorted(matches, key=len, reverse=True):
            excerpts = self.index.excerpts(word, {sid: row for sid, row in matches[word].items() if sid in missing})
            found.update(excerpts)
            missing -= excerpts.keys()
            if not missing:
                break
        return found

    def _update_index(self, summaries: list[SessionSummary]) -> None:
        self.index.update({s.id: (s.path, s.size) for s in summaries if s.path is not None})

    def _summarise(self, path: Path, st: os.stat_result, record: dict[str, Any] | None
                   ) -> tuple[SessionSummary, dict[str, Any] | None]:
        """The summary of a session file and the record to save for it,
        continuing `record` (what an earlier read of the file found) when the
        file is that one grown. Read with `count`, `find` and `rfind` over the
        mapped bytes (no loop over its lines: most are stream chunks), parsing
        only the few lines it needs."""
        if record is not None and record["file"] == [st.st_ino, st.st_mtime_ns, st.st_size]:
            header, scan = record["header"], _Scan(**record["scan"])
            return self._summary(path, st, header, scan), record
        with open(path, "rb") as f:
            first = f.readline()
            if not first:
                raise CorruptSessionError(path, 1, "empty file (no header)")
            try:
                header = json.loads(first)
            except ValueError:
                raise CorruptSessionError(path, 1, "invalid header") from None
            if not isinstance(header, dict) or header.get("kind") != HEADER_KIND:
                raise CorruptSessionError(path, 1, "not an agent_lsp session file")
            header = {k: header.get(k) for k in ("id", "created", "title", "parentSession", "meta")}
            scan = _Scan(len(first), None, header["title"], 0, 0, None, None)
            if not first.endswith(b"\n") or st.st_size <= len(first):
                return self._summary(path, st, header, scan), None  # no event yet (or a header being written)
            head = hashlib.sha1(first).hexdigest()
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as raw:
                if _grown_from(record, st, head, raw):
                    scan = _Scan(**record["scan"])  # the file read before, grown: read what it gained
                scan = _scan_lines(path, raw, scan)
                mark = _mark(raw, scan.covered)
        record = {"v": RECORD_VERSION, "file": [st.st_ino, st.st_mtime_ns, st.st_size], "head": head, "mark": mark,
                  "header": header, "scan": asdict(scan)}
        return self._summary(path, st, header, scan), record

    @staticmethod
    def _summary(path: Path, st: os.stat_result, header: dict[str, Any], scan: _Scan) -> SessionSummary:
        mtime_ms = st.st_mtime_ns // 1_000_000
        created = int(header.get("created") or mtime_ms)
        meta = header.get("meta")
        return SessionSummary(
            id=str(header.get("id") or path.stem),
            title=scan.titled or scan.title,
            created=created,
            updated=max(scan.updated or mtime_ms, created),
            turns=scan.turns,
            event_count=scan.count,
            path=path,
            parent=header.get("parentSession"),
            meta=meta if isinstance(meta, dict) else {},
            usage=scan.usage,
            size=st.st_size,
        )

    # ----------------------------------------------------------------- delete

    def delete(self, session_id: str) -> bool:
        """Delete a session's file; SessionLockedError (with `lock=True`) when another
        live process has it open."""
        path = self.path_of(session_id)
        live = self._live.get(session_id)
        if self.lock:
            pid = self.holder_of(session_id)
            if pid is not None and pid != os.getpid():
                raise SessionLockedError(session_id, pid if pid > 0 else None, self.lock_path_of(session_id))
        self._live.pop(session_id, None)
        if live is not None:
            live.detach_writer()  # a live agent must not recreate the file headerless
            if live.lock is not None:
                live.lock.release()
        for extra in (self.lock_path_of(session_id), torn_copy_of(path)):
            try:
                extra.unlink()
            except OSError:
                pass
        self._summary_cache.pop(session_id, None)  # not under _listing: a long listing must not hold up the loop
        self.index.forget(session_id)
        session_files.remove(session_files.files_dir(path))
        try:
            path.unlink()
            return True
        except FileNotFoundError:
            return False
