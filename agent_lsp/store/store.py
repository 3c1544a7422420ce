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

import json
import os
import threading
import weakref
from array import array
from pathlib import Path
from typing import Any

from agent_lsp.store import files as session_files
from agent_lsp.store import lock as session_lock
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.store.event_log import EventLog
from agent_lsp.store.file_format import HEADER_KIND, CorruptSessionError, new_session_id, torn_copy_of
from agent_lsp.store.file_reader import read_events, read_log
from agent_lsp.store.search_index import SearchIndex
from agent_lsp.store.repair import repair_events
from agent_lsp.store.session import Event, JsonlWriter, Session, now_ms
from agent_lsp.store.summaries import SessionSummary, parse_record, summarise


def _open_turn(events: list[Event]) -> int | None:
    """The number of the turn left open at the end of `events`, if any."""
    for e in reversed(events):
        if e.type == "turn/end":
            return None
        if e.type == "turn/start":
            return int(e.data.get("turn", 0))
    return None


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
        header, events = read_log(path, repair_torn=True)
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
        return read_log(self.path_of(session_id), repair_torn=False)
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
            header, source_events = read_events(self.path_of(source_id), repair_torn=False)
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
                    before = parse_record(saved.get(path.stem))
                summary, record = summarise(path, st, before)
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
