"""Crash-safe file reverts: what a revert is about to do, written down before it starts.

A turn revert, a rewind with `revertFiles` or the undo of reviewed changes
(review_undo.py) changes many files one after the other through the editor,
then records what it did in the session log.
A process killed in between would leave some files reverted and others not,
with nothing in the log saying so. So, before the first file is touched, the
host writes an intent (`<sessions dir>/reverts/<session id>.json`): the
operation, and every file it may touch as it is now (its bytes, or that it
does not exist). Once every file is done, the intent is rewritten with the
events that record the operation (phase "commit"); the events are appended
and flushed, and the intent is deleted.

An intent found when the session is next opened (at the host's start, or
when the session is loaded) means the process stopped in between:

- phase "apply": the files are put back as the intent holds them (all of
  them, so none is left half done) and the operation is not recorded: the
  user may run it again;
- phase "commit": every file was done; the events of the intent that the log
  does not hold yet are appended, and the messages it was to tell the model
  (an undo of reviewed changes) that the session's inbox does not hold yet
  are queued for its next step.

Either way a `revert/recovered` event says what was done, naming the files,
and the host keeps a notice for the session's next load.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from agent_lsp.agent.inbox import NEXT_STEP, Inbox, make_message
from agent_lsp.store.session import Session
from agent_lsp.visible import visible_name

log = logging.getLogger(__name__)

INTENTS_DIR = "reverts"
RECOVERED_EVENT = "revert/recovered"


@dataclass
class RevertIntent:
    session_id: str
    operation: str  # "rewind" | "turn-revert" | "review-undo"
    turn: int
    start_seq: int  # the log's length when it began: its events come after
    files: dict[str, bytes | None]  # path -> bytes before (None: the file did not exist)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    phase: str = "apply"  # "apply" | "commit"
    events: list[dict[str, Any]] = field(default_factory=list)  # phase "commit": {type, data, time?}
    # phase "commit": what the model is told once the events are recorded: {id, content, source, note?}
    messages: list[dict[str, Any]] = field(default_factory=list)
    # files the editor held in buffers when it began: what it changed there is the editor's
    buffers: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "sessionId": self.session_id, "operation": self.operation, "turn": self.turn,
            "startSeq": self.start_seq, "phase": self.phase, "events": self.events, "messages": self.messages,
            "buffers": self.buffers,
            "files": [{"path": path, "before": None if data is None else base64.b64encode(data).decode("ascii")}
                      for path, data in self.files.items()],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> RevertIntent:
        files = {str(f["path"]): None if f.get("before") is None else base64.b64decode(f["before"]) for f in obj["files"]}
        return cls(str(obj["sessionId"]), str(obj["operation"]), int(obj["turn"]), int(obj["startSeq"]), files,
                   id=str(obj["id"]), phase=str(obj["phase"]), events=list(obj.get("events") or []),
                   messages=list(obj.get("messages") or []), buffers=[str(b) for b in obj.get("buffers") or []])

    def describe(self) -> str:
        if self.operation == "review-undo":
            return "the undo of changes you reviewed"
        return f"turn {self.turn}" if self.operation == "turn-revert" else f"the rewind to before turn {self.turn}"


@dataclass
class Recovery:
    """What was done with an intent found at the next start."""

    session_id: str
    outcome: str  # "rolled-back" | "completed"
    paths: list[str]
    message: str


class RevertIntents:
    """The intents of one folder's sessions (a directory beside their logs)."""

    def __init__(self, directory: Path, root: Path):
        self.directory = directory
        self.root = root  # files are named relative to it in what the user is told
        self._running: set[str] = set()  # sessions with a revert going on in this process: not a crash's
        self._locks: dict[str, asyncio.Lock] = {}

    def path_of(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.json"

    def lock(self, session_id: str) -> asyncio.Lock:
        """Held while files of the session are reverted or undone: one operation at a
        time per session (each has the session's one intent file)."""
        return self._locks.setdefault(session_id, asyncio.Lock())

    def pending(self) -> list[str]:
        """The sessions with an intent on disk."""
        try:
            return sorted(p.stem for p in self.directory.glob("*.json"))
        except OSError:
            return []

    def begin(self, session: Session, operation: str, turn: int, paths: Iterable[Path],
              buffers: Iterable[Path] = ()) -> RevertIntent:
        """Write the intent (durably) before any of `paths` is touched (`buffers`: those
        of them the editor holds in buffers, which it changes instead of the disk)."""
        files: dict[str, bytes | None] = {}
        for path in dict.fromkeys(str(p) for p in paths):
            try:
                files[path] = Path(path).read_bytes()
            except FileNotFoundError:
                files[path] = None
            except OSError:
                continue  # not readable now: the revert skips it too
        intent = RevertIntent(session.id, operation, turn, len(session.events), files,
                              buffers=[str(b) for b in buffers])
        self._write(intent)
        self._running.add(session.id)
        return intent

    def begin_turns(self, session: Session, operation: str, turn: int, turns: list[int],
                    journal: Any) -> RevertIntent | None:
        """The intent of reverting these turns of the edit journal (None: they changed no file)."""
        paths = [p for t in turns for c in journal.changes(session.id, t)
                 for p in (c.path, c.new_path) if p is not None]
        return self.begin(session, operation, turn, paths) if paths else None

    def abandon(self, intent: RevertIntent | None, journal: Any, session_id: str) -> None:
        """A revert that failed half way in this process: its files put back, the
        journal read again from the log (it took the turns for reverted)."""
        if intent is not None:
            self.roll_back(intent)
        journal.forget(session_id)

    def record(self, intent: RevertIntent | None, session: Session,
               events: list[tuple[str, dict[str, Any], int | None]]) -> None:
        """Append the events that record a revert whose files are all done, then drop its intent."""
        if intent is not None:
            self.commit(intent, events)
        for type_, data, at in events:
            session.append(type_, data, time=at)
        try:
            session.flush()
        except OSError:
            log.exception("recording a revert of %s", session.id)
            return  # the intent stays: the next load appends what the log lacks
        if intent is not None:
            self.finish(intent)

    def recover_pending(self, store: Any, load: Callable[[str], Session]) -> None:
        """At start: load (which recovers, see `recover`) and close each session with
        an intent that no other live process has open (one that has is still doing
        the revert) and whose log is still there."""
        mine = os.getpid()
        for session_id in self.pending():
            if store.holder_of(session_id) not in (None, mine) or not store.path_of(session_id).exists():
                continue
            try:
                load(session_id).close()
            except Exception:  # noqa: BLE001 - one session's problem stops no other
                log.exception("finishing the interrupted revert of %s", session_id)

    def commit(self, intent: RevertIntent, events: list[tuple[str, dict[str, Any], int | None]],
               messages: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
        """Every file is done: what is left is recording `events` (type, data, time)
        and telling the model `messages`."""
        intent.phase = "commit"
        intent.events = [{"type": t, "data": d, **({"time": at} if at is not None else {})} for t, d, at in events]
        intent.messages = list(messages)
        self._write(intent)

    def finish(self, intent: RevertIntent) -> None:
        self._running.discard(intent.session_id)
        try:
            self.path_of(intent.session_id).unlink()
        except FileNotFoundError:
            pass

    def roll_back(self, intent: RevertIntent) -> list[str]:
        """Put every file back as the intent holds it and drop the intent; the paths that changed."""
        restored = _restore_all(intent)
        self.finish(intent)
        return restored

    def read(self, session_id: str) -> RevertIntent | None:
        try:
            return RevertIntent.from_json(json.loads(self.path_of(session_id).read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as error:
            # torn before it was renamed into place cannot happen; anything else is not ours to act on
            log.warning("ignoring the unreadable revert intent %s: %s", self.path_of(session_id), error)
            return None

    def recover(self, session: Session) -> Recovery | None:
        """Finish or roll back the session's interrupted revert, if it has one,
        and record what was done in its log."""
        if session.id in self._running:  # ours, going on (its session was loaded again meanwhile)
            return None
        intent = self.read(session.id)
        if intent is None:
            return None
        if intent.phase == "commit":
            since = list(session.events.iter_range(intent.start_seq, len(session.events)))
            present = {_event_key(e.type, e.data) for e in since}
            for event in intent.events:
                if _event_key(event["type"], event["data"]) not in present:
                    session.append(event["type"], event["data"], time=event.get("time"))
            _queue_missing(session, intent.messages, since)
            paths = [str(p) for e in intent.events for p in e["data"].get("reverted") or ()]
            paths += [str(e["data"]["path"]) for e in intent.events if intent.operation == "review-undo"
                      and isinstance(e["data"].get("path"), str)]
            paths = list(dict.fromkeys(paths))
            outcome = "completed"
            message = (f"The server stopped while recording {intent.describe()}; its files were all done "
                       f"and it is now recorded: {self._names(paths) or 'no file changed'}")
        else:
            paths = _restore_all(intent)  # the intent stays until this is recorded: a crash now repeats it
            outcome = "rolled-back"
            message = (f"The server stopped in the middle of {intent.describe()}; "
                       + (f"these files were put back as they were before it: {self._names(paths)}. "
                          if paths else "no file had been changed yet. ")
                       + "Nothing was reverted; run it again if you still want it."
                       + (f" The editor's unsaved buffers of {self._names(intent.buffers)} may hold part of it: "
                          "look at them before saving." if intent.buffers else ""))
        session.append(RECOVERED_EVENT, {"operation": intent.operation, "turn": intent.turn, "outcome": outcome,
                                         "paths": paths, "message": message})
        session.flush()
        self.finish(intent)
        log.warning("%s: %s", session.id, message)
        return Recovery(session.id, outcome, paths, message)

    def _names(self, paths: list[str], most: int = 20) -> str:
        shown = []
        for path in paths[:most]:
            try:
                shown.append(visible_name(str(Path(path).relative_to(self.root))))
            except ValueError:
                shown.append(visible_name(path))
        more = f" and {len(paths) - most} more" if len(paths) > most else ""
        return ", ".join(shown) + more

    def _write(self, intent: RevertIntent) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.path_of(intent.session_id)
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(intent.to_json(), f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)
        _sync_directory(self.directory)


def _event_key(type_: str, data: dict[str, Any]) -> tuple[str, Any]:
    """What says an event of an intent is in the log already: its turn (a revert
    or rewind is recorded once per turn), else its whole data."""
    if data.get("turn") is not None:
        return type_, data.get("turn")
    return type_, json.dumps(data, sort_keys=True)


def _queue_missing(session: Session, messages: list[dict[str, Any]], since: list[Any]) -> None:
    """Queue for the model's next step the intent's messages its inbox never got."""
    queued = {m.get("id") for e in since if e.type == "agent/inbox/spliced"
              for m in (e.data.get("inserted") or ()) if isinstance(m, dict)}
    missing = [m for m in messages if m.get("id") not in queued]
    if not missing:
        return
    inbox = Inbox(session, lambda name, payload: None)
    inbox.rebuild(session.events.held(session.inherited_length))
    for m in missing:
        inbox.append(NEXT_STEP, make_message(m["content"], id=m["id"], source=m.get("source", "user"),
                                             delivery="inject", note=m.get("note")))


def _restore_all(intent: RevertIntent) -> list[str]:
    return [path for path, before in intent.files.items() if _restore(Path(path), before)]


def _restore(path: Path, before: bytes | None) -> bool:
    """Make `path` hold `before` (None: not exist); whether it had to change."""
    try:
        now: bytes | None = path.read_bytes()
    except FileNotFoundError:
        now = None
    except OSError:
        now = b"" if before != b"" else None
    if now == before:
        return False
    try:
        if before is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(before)  # in place (mode and inode kept); a crash now finds the intent again
    except OSError as error:
        log.error("could not put back %s: %s", path, error)
        return False
    return True


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
