"""The session: an append-only log of typed events (R1, R11 in docs/agent-loop.md).

`Session.append` is synchronous and cheap: it assigns the next contiguous
`seq`, keeps the surface (the seqs that make up model history) up to date,
buffers one JSON line for the writer and notifies observers after commit.
Secrets in the data (`agent_lsp.secrets.mask`) are masked before the event is
committed: the log, the file, the notifications and the model see `***`.
Observers are isolated (a throwing observer never breaks the loop) and are
always notified in seq order, even when an observer appends (the nested
event is committed at once, its notification queued behind the current one).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

from agent_lsp.secrets import mask_json_line
from agent_lsp.store.event import Event
from agent_lsp.store.event_log import EventLog
from agent_lsp.store.files import files_dir

log = logging.getLogger(__name__)

# Events written to disk in one batch at most this many lines apart when no
# checkpoint flushes earlier (bounds memory and data lost on a crash).
BATCH_LINES = 512
# ... and at most this long after the first of them (the bound for events no
# client is shown: a shown event is written before it is sent, `write_pending`).
MAX_DELAY_S = 0.25

# Writers with buffered lines, so that `write_pending` finds them.
_unwritten: dict[int, "JsonlWriter"] = {}


def write_pending() -> None:
    """Write every session's buffered events to the OS (a write, not an fsync:
    they survive a crash of this process). Called before events are shown to a
    client, so that no seq a client saw can name another event after a crash.
    A failed write is logged; those events stay buffered and are retried."""
    for writer in list(_unwritten.values()):
        writer.try_flush()

# One reusable encoder: json.dumps with non-default options builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def now_ms() -> int:
    return int(time.time() * 1000)


class JsonlWriter:
    """Buffers event lines and appends them to one file per session. The
    file is opened per flush, so thousands of idle sessions hold no fds."""

    def __init__(self, path: Path, *, fsync: bool = False):
        self.path = path
        self.fsync = fsync
        self._pending: list[str] = []
        self._auto_at = BATCH_LINES  # pending size that triggers a batch write
        self._timer: asyncio.TimerHandle | None = None

    def add(self, line: str) -> None:
        """Buffer one line; write a batch when enough are pending, or
        MAX_DELAY_S after the first (when an event loop runs). A failed
        batch write is logged, not raised: the event is already committed in
        memory, and the next checkpoint flush (which does raise) retries it."""
        self._pending.append(line)
        if len(self._pending) == 1:
            _unwritten[id(self)] = self
            if self._timer is None:
                self._arm_timer()
        if len(self._pending) >= self._auto_at:
            try:
                self.flush()
            except OSError as e:
                log.error("writing %s failed (will retry): %s", self.path, e)
                self._auto_at = len(self._pending) + BATCH_LINES

    def _arm_timer(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a script, a benchmark): batches and checkpoints only
            return
        self._timer = loop.call_later(MAX_DELAY_S, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if not self.try_flush():
            self._arm_timer()

    def try_flush(self) -> bool:
        """`flush`, logging a failure instead of raising it (False then)."""
        try:
            self.flush()
            return True
        except OSError as e:
            log.error("writing %s failed (will retry): %s", self.path, e)
            return False

    def flush(self) -> None:
        if not self._pending:
            return
        data = "\n".join(self._pending) + "\n"
        with open(self.path, "ab") as f:
            start = f.tell()
            try:
                f.write(data.encode("utf-8"))
                f.flush()
                if self.fsync:
                    os.fsync(f.fileno())
            except OSError:
                try:
                    f.truncate(start)  # no half-written batch: the retry writes it whole
                except OSError:
                    pass
                raise
        self._auto_at = BATCH_LINES
        self.discard()  # only once written: a failed flush is retried by the next one

    def discard(self) -> None:
        """Forget what is buffered (written, or its session file deleted)."""
        self._pending.clear()
        _unwritten.pop(id(self), None)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def pending(self) -> int:
        return len(self._pending)


class Session:
    """The live event log of one session. `events[i].seq == i`."""

    def __init__(
        self,
        session_id: str,
        events: list[Event] | EventLog | None = None,
        *,
        writer: JsonlWriter | None = None,
        meta: dict[str, Any] | None = None,
        created: int | None = None,
        resumed: bool = False,
        parent_session: str | None = None,
        inherited_length: int = 0,
    ):
        self.id = session_id
        self.events = EventLog()
        self.meta = dict(meta or {})
        self.created = created if created is not None else now_ms()
        # True when the session was loaded from disk: the first request of
        # the next agent logs `request/header reason=resume` (R11.4).
        self.resumed = resumed
        self.seed_length = 0
        # A fork (R11.5): the parent's id and how many leading events were
        # copied from it (the file header's seedLength). 0 for a fresh session.
        self.parent_session = parent_session
        self.inherited_length = inherited_length
        self.surface: list[int] = []
        self.replace_generation = 0
        self.last_replace_seq = -1  # seq of the latest positional replacement
        self._writer = None
        self.closed = False
        self.lock: Any = None  # the store's SessionLock while this process holds the session
        self._observers: list[Callable[[Event], Any]] = []
        self._notifying = False
        self._queue: deque[Event] = deque()
        if isinstance(events, EventLog):  # read from the session file: its lines are tracked already
            self.events = events
            for e in events.held():
                self._commit_surface(e)
        else:
            for e in events or ():
                self._commit(e)
        self._writer = writer

    @property
    def files(self) -> Path | None:
        """The folder of the files its messages refer to (`store/files.py`); None off disk."""
        return None if self._writer is None else files_dir(self._writer.path)

    # ------------------------------------------------------------------ append

    def append(self, type: str, data: dict[str, Any] | None = None, *, time: int | None = None) -> Event:
        event = Event(len(self.events), now_ms() if time is None else time, type, data if data is not None else {})
        # Serialise before committing: non-JSON data is rejected and leaves the log unchanged.
        line, masked = mask_json_line(_encode(event.to_json()))
        if masked is not None:  # a secret in the data: what is kept, stored and sent is the masked copy
            event.data = masked["data"]
        self._commit(event, len(line) if line.isascii() else len(line.encode("utf-8")))
        if self._writer is not None:
            self._writer.add(line)
        if self._observers:
            self._queue.append(event)
            if not self._notifying:
                self._drain()
        return event

    def _commit(self, event: Event, line_bytes: int | None = None) -> None:
        if event.seq != len(self.events):
            raise ValueError(f"non-contiguous seq {event.seq}, expected {len(self.events)}")
        self.events.append(event, line_bytes if self._writer is not None else None)
        self._commit_surface(event)

    def _commit_surface(self, event: Event) -> None:
        op = event.data.get("surfaceOp")
        if op is None:
            return
        if op == "append":
            self.surface.append(event.seq)
        elif isinstance(op, dict) and op.get("kind") == "replace":
            self._replace(int(op["start"]), int(op["end"]), event.seq)

    def _replace(self, start: int, end: int, seq: int) -> None:
        """Positional replacement: the surface nodes from `start` to `end`
        (seqs, by surface position) become the single node `seq`."""
        try:
            i = self.surface.index(start)
            j = self.surface.index(end)
        except ValueError as e:
            raise ValueError(f"surface replace of {start}..{end}: not on the surface") from e
        if j < i:
            raise ValueError(f"surface replace of {start}..{end}: end before start")
        self.surface[i : j + 1] = [seq]
        self.replace_generation += 1
        self.last_replace_seq = seq

    def _drain(self) -> None:
        self._notifying = True
        try:
            while self._queue:
                event = self._queue.popleft()
                for fn in tuple(self._observers):
                    try:
                        fn(event)
                    except Exception:  # observers never break the loop (R4.10)
                        log.exception("session observer failed on %s", event.type)
        finally:
            self._notifying = False

    # --------------------------------------------------------------- observers

    def subscribe(self, fn: Callable[[Event], Any]) -> Callable[[], None]:
        self._observers.append(fn)

        def unsubscribe() -> None:
            if fn in self._observers:
                self._observers.remove(fn)

        return unsubscribe

    # ------------------------------------------------------------- durability

    def flush(self) -> None:
        """Write buffered events to disk (a checkpoint, R11.2)."""
        if self._writer is not None:
            self._writer.flush()

    def detach_writer(self) -> None:
        if self._writer is not None:
            self._writer.discard()
        self._writer = None
        self.events.detach()

    def close(self) -> None:
        """Flush and retire this in-memory session (its agent was disposed):
        observers are dropped, later appends stay in memory only, and the
        store's next load() reads the file afresh."""
        self.flush()
        self._writer = None
        self.events.detach()
        self._observers.clear()
        self.closed = True
        if self.lock is not None:
            self.lock.release()

    @property
    def path(self) -> Path | None:
        return self._writer.path if self._writer is not None else None

    # ------------------------------------------------------------------ facts

    def last_turn(self) -> int:
        for e in reversed(self.events):
            if e.type == "turn/start":
                return int(e.data.get("turn", 0))
        return 0

    def __len__(self) -> int:
        return len(self.events)
