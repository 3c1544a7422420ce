"""Session summaries, as a listing shows them: read from a session file with
`count`, `find` and `rfind` over its mapped bytes, parsing only the few lines
needed, and continued from a saved record when the file only grew."""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from agent_lsp.store.file_format import HEADER_KIND, CorruptSessionError
from agent_lsp.store.message_text import user_text


TITLE_MAX = 80


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


def parse_record(text: str | None) -> dict[str, Any] | None:
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


def summarise(path: Path, st: os.stat_result, record: dict[str, Any] | None
               ) -> tuple[SessionSummary, dict[str, Any] | None]:
    """The summary of a session file and the record to save for it,
    continuing `record` (what an earlier read of the file found) when the
    file is that one grown. Read with `count`, `find` and `rfind` over the
    mapped bytes (no loop over its lines: most are stream chunks), parsing
    only the few lines it needs."""
    if record is not None and record["file"] == [st.st_ino, st.st_mtime_ns, st.st_size]:
        header, scan = record["header"], _Scan(**record["scan"])
        return _summary(path, st, header, scan), record
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
            return _summary(path, st, header, scan), None  # no event yet (or a header being written)
        head = hashlib.sha1(first).hexdigest()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as raw:
            if _grown_from(record, st, head, raw):
                scan = _Scan(**record["scan"])  # the file read before, grown: read what it gained
            scan = _scan_lines(path, raw, scan)
            mark = _mark(raw, scan.covered)
    record = {"v": RECORD_VERSION, "file": [st.st_ino, st.st_mtime_ns, st.st_size], "head": head, "mark": mark,
              "header": header, "scan": asdict(scan)}
    return _summary(path, st, header, scan), record


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
