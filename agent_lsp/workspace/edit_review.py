"""EditReview: the agent's edits waiting for the user to keep or undo them.

With the `edits.review` setting at "review", an applied text edit stays in
the editor's buffer unsaved and each of its line hunks is pending: the user
keeps it or undoes it (one hunk, a file or all of a session). Undo puts the
hunk's old lines back through the editor (a versioned edit, so a buffer the
user changed meanwhile is not overwritten blindly) and tells the model, in a
message at its next step, that the user rejected that change, so it does not
make it again; an undo of several files is all or nothing across a crash
(review_undo.py). A file is saved (the editor's save path) once none of its
hunks is pending.

A pending hunk is found in the current text by its lines, as turn revert
finds them (`agent_lsp.workspace.hunk_places`): the user's edits elsewhere
move it; a hunk whose own lines the user changed is theirs now and is no
longer pending. Both steps are durable events of the session log
(`review/pending`, `review/resolve`), so a replay shows what was held and
what the user did, and a server that starts again reads the hunks still
pending back from the logs of its folder's sessions (`_read_logs`, on first
use). A hunk read back carries its line number and up to 3 lines of context,
not the whole file: it waits until its file is open in the editor (the
unsaved text the user reviews is in the buffer, not on disk; an editor whose
edits land on disk, `holds_unsaved_text = False`, has it there), then is found
there like a patch hunk (`agent_lsp.workspace.hunk_places`); a hunk whose
lines or context changed meanwhile is the user's and no longer pending, so
nothing is ever kept or undone against text it was not made on.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal

from agent_lsp.agent.ports import Editor, ToolContext
from agent_lsp.tools.journal_record import CONTEXT_LINES, FileChange, PatchHunk, text_digest
from agent_lsp.tools.hunks import hunks_by_diff, hunks_from_spans
from agent_lsp.tools.text import split_keepends
from agent_lsp.workspace.documents import normalise_path
from agent_lsp.workspace.hunk_places import current_text, exact_places, find_places, line_map, mapped_range
from agent_lsp.workspace.review_undo import record_undos, undo_files

if TYPE_CHECKING:
    from agent_lsp.workspace.open_sessions import OpenSessions
    from agent_lsp.workspace.revert_intent import RevertIntents

PENDING_EVENT = "review/pending"
RESOLVE_EVENT = "review/resolve"

Action = Literal["keep", "undo"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)  # compared by identity: `after` is a whole file
class PendingHunk:
    hunk_id: str  # "<tool call id>.<n>": unique in its session
    session_id: str
    turn: int
    call_id: str
    path: Path
    after: tuple[str, ...]  # the file's lines right after the change (shared by its hunks)
    a1: int  # the hunk's new lines are after[a1:a2]
    a2: int
    old: str  # the text those lines replaced
    new: str


@dataclass(frozen=True, eq=False)
class LoggedHunk:
    """A pending hunk read back from a session log: found again (and made a
    PendingHunk) once its file is open in the editor."""

    hunk_id: str
    session_id: str
    turn: int
    call_id: str
    path: Path
    patch: PatchHunk  # where it was in the text right after the change, with context
    after_sha: str | None  # that text's digest: the buffer still holds exactly it


@dataclass(frozen=True)
class PlacedHunk:
    """A pending hunk and where its lines are in the current text: lines [start, end)."""

    hunk: PendingHunk
    start: int
    end: int


@dataclass
class ReviewOutcome:
    resolved: list[str] = field(default_factory=list)  # hunk ids
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (hunk id, why)


class ReviewError(ValueError):
    """A resolve that names nothing pending (shown to the client as is)."""


class EditReview:
    """The pending hunks of one workspace folder's sessions (its tools' ChangeReview):
    edits of the folder at `root` through `editor`, held while `mode()` is "review"."""

    def __init__(self, sessions: OpenSessions, editor: Editor, root: Path, *, mode: Callable[[], str],
                 intents: RevertIntents | None = None):
        self.sessions = sessions
        self.intents = intents  # where an undo writes down what it is about to do (crash-safe)
        self.editor = editor
        self.root = root
        self._mode = mode
        self._pending: list[PendingHunk] = []
        self._logged: list[LoggedHunk] | None = None  # None until the session logs were read

    @property
    def mode(self) -> str:
        return self._mode()

    # ----------------------------------------------------------- ChangeReview

    def hold(self, ctx: ToolContext, change: FileChange) -> None:
        self._read_logs()  # first: this change's own event is not to be read back as well
        before, after = change.before or "", change.after or ""
        old_lines, new_lines = split_keepends(before), split_keepends(after)
        if change.spans is not None:
            hunks = hunks_from_spans(before, list(change.spans))
        else:
            hunks = hunks_by_diff(old_lines, new_lines)
        shared = tuple(new_lines)
        path = normalise_path(change.path)
        held = [
            PendingHunk(f"{ctx.call_id}.{n}", ctx.session_id, ctx.turn, ctx.call_id, path, shared, h.a1, h.a2,
                        "".join(old_lines[h.b1 : h.b2]), "".join(new_lines[h.a1 : h.a2]))
            for n, h in enumerate(hunks, 1)
        ]
        self._pending += held
        agent = self.sessions.agents.get(ctx.session_id)
        if agent is not None and held:
            agent.session.append(PENDING_EVENT, {
                "turn": ctx.turn, "callId": ctx.call_id, "path": str(path), "afterSha": text_digest(after),
                "hunks": [{**_hunk_data(h), **_hunk_place(h)} for h in held],
            })

    # ---------------------------------------------------------------- queries

    def pending(self, session_id: str | None = None, path: Path | None = None) -> list[PlacedHunk]:
        """The pending hunks (of one session, one file), where they are now. A hunk
        whose lines the user changed is dropped: it is no longer the agent's."""
        self._find_logged(session_id, path)
        placed: list[PlacedHunk] = []
        gone: set[PendingHunk] = set()
        wanted = [h for h in self._pending if (session_id is None or h.session_id == session_id)
                  and (path is None or h.path == path)]
        for file in dict.fromkeys(h.path for h in wanted):
            current = current_text(self.editor, file)
            now = split_keepends(current[0]) if current is not None else None
            maps: dict[int, dict[int, int]] = {}  # by id of a change's `after` lines
            for hunk in (h for h in wanted if h.path == file):
                where = None
                if now is not None:
                    lines = maps.get(id(hunk.after))
                    if lines is None:
                        lines = maps[id(hunk.after)] = line_map(list(hunk.after), now)
                    where = mapped_range(lines, hunk.a1, hunk.a2, len(hunk.after))
                if where is None:
                    gone.add(hunk)
                else:
                    placed.append(PlacedHunk(hunk, *where))
        if gone:
            self._pending = [h for h in self._pending if h not in gone]
        return sorted(placed, key=lambda p: (str(p.hunk.path), p.start))

    def forget(self, session_id: str) -> None:
        self._read_logs()
        self._pending = [h for h in self._pending if h.session_id != session_id]
        self._logged = [h for h in self._logged or () if h.session_id != session_id]

    # ------------------------------------------------- read back after a restart

    def _read_logs(self) -> None:
        """Once: the hunks still pending in the logs of this folder's sessions
        (a `review/pending` not followed by a `review/resolve` of the hunk).
        Sessions another live server has open are its own to review."""
        if self._logged is not None:
            return
        self._logged = []
        store = self.sessions.store
        for file in sorted(store.directory.glob("*.jsonl")):
            session_id = file.stem
            try:
                if b'"type":"review/pending"' not in file.read_bytes():
                    continue
                holder = store.holder_of(session_id)
                if holder is not None and holder != os.getpid():
                    continue
                live = self.sessions.agents.get(session_id)
                events = live.session.events if live is not None else store.snapshot(session_id)[1]
            except (OSError, ValueError) as error:
                log.warning("reading the pending review of %s: %s", session_id, error)
                continue
            self._logged += _logged_hunks(session_id, events)

    def _find_logged(self, session_id: str | None, path: Path | None) -> None:
        """Find the wanted hunks read back from the logs in their open buffers:
        found, they are pending as if held in this run; not found, they are gone."""
        self._read_logs()
        wanted = [h for h in self._logged or () if (session_id is None or h.session_id == session_id)
                  and (path is None or h.path == path)]
        for file in dict.fromkeys(h.path for h in wanted):
            snapshot = self.editor.document(file)
            if snapshot is not None:
                text = snapshot.text
            elif getattr(self.editor, "holds_unsaved_text", True):
                continue  # not open: the text under review is not on disk; it waits
            else:  # an editor whose edits land on disk (ACP, headless): the disk holds it
                current = current_text(self.editor, file)
                if current is None:
                    continue
                text = current[0]
            now = split_keepends(text)
            shared = tuple(now)
            exact = text_digest(text)
            of_file = [h for h in wanted if h.path == file]
            for call in dict.fromkeys((h.session_id, h.call_id) for h in of_file):
                change = [h for h in of_file if (h.session_id, h.call_id) == call]
                patches = [h.patch for h in change]
                places = exact_places(patches) if change[0].after_sha == exact else find_places(now, patches)
                for hunk, place in zip(change, places):
                    if place is not None:
                        self._pending.append(PendingHunk(
                            hunk.hunk_id, hunk.session_id, hunk.turn, hunk.call_id, file, shared, place[0], place[1],
                            hunk.patch.old, hunk.patch.new))
            self._logged = [h for h in self._logged or () if h not in of_file]

    # -------------------------------------------------------------- resolving

    async def resolve(self, session_id: str, action: Action, *, path: Path | None = None,
                      hunk_id: str | None = None) -> ReviewOutcome:
        """Keep or undo one hunk (`hunk_id`), a file's (`path`) or all of the session's.
        An undo of several files is all or nothing across a crash (review_undo.py)."""
        self._read_logs()
        chosen = [p for p in self.pending(session_id, path) if hunk_id is None or p.hunk.hunk_id == hunk_id]
        if hunk_id is not None and not chosen:
            raise ReviewError(f"hunkId: no pending change {hunk_id} in session {session_id}")
        by_file: dict[Path, list[PlacedHunk]] = {}
        for placed in chosen:
            by_file.setdefault(placed.hunk.path, []).append(placed)
        outcome = ReviewOutcome()
        if action == "undo" and by_file:
            async with self.intents.lock(session_id) if self.intents is not None else contextlib.nullcontext():
                session = self.sessions.agent(session_id).session
                undos, skipped, intent = await undo_files(self.editor, self.root, self.intents, session, by_file)
                for file, why in skipped.items():
                    outcome.skipped += [(p.hunk.hunk_id, why) for p in by_file.pop(file)]
                agent = self.sessions.agent(session_id)  # again: it may have been rebuilt meanwhile
                record_undos(self.intents, intent, agent.session, undos,
                             lambda u: (RESOLVE_EVENT, _resolve_data(u.path, "undo", u.placed, u.diff)),
                             lambda m: agent.inject(m["content"], id=m["id"], source=m["source"], note=m["note"]))
        elif by_file:
            session = self.sessions.session_log(session_id)
            for file, placed in by_file.items():
                session.append(RESOLVE_EVENT, _resolve_data(file, action, placed, None))
            try:
                session.flush()
            except OSError:
                pass  # the store logs a failing write and retries it
        for file, placed in by_file.items():
            done = {p.hunk for p in placed}  # hunk ids are unique within a session only
            self._pending = [h for h in self._pending if h not in done]
            outcome.resolved += [p.hunk.hunk_id for p in placed]
            if not any(h.path == file for h in [*self._pending, *(self._logged or ())]):
                await self.editor.save([file])
        return outcome


def _resolve_data(file: Path, action: Action, placed: list[PlacedHunk], diff: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {"action": action, "path": str(file), "hunks": [_hunk_data(p.hunk) for p in placed]}
    if diff is not None:
        data["diff"] = diff
    return data


def _hunk_data(hunk: PendingHunk) -> dict[str, Any]:
    return {"hunkId": hunk.hunk_id, "turn": hunk.turn, "callId": hunk.call_id, "oldText": hunk.old, "newText": hunk.new}


def _hunk_place(hunk: PendingHunk) -> dict[str, Any]:
    """Where the hunk is in the text right after its change, with context: what
    finds it again in the buffer after a restart."""
    return {"at": hunk.a1, "contextBefore": "".join(hunk.after[max(0, hunk.a1 - CONTEXT_LINES) : hunk.a1]),
            "contextAfter": "".join(hunk.after[hunk.a2 : hunk.a2 + CONTEXT_LINES])}


def _logged_hunks(session_id: str, events: Any) -> list[LoggedHunk]:
    """The hunks a session log leaves pending, in the order they were held."""
    pending: dict[str, LoggedHunk] = {}
    for event in events:
        kind, data = getattr(event, "type", None), getattr(event, "data", None)
        if kind not in (PENDING_EVENT, RESOLVE_EVENT) or not isinstance(data, dict):
            continue
        for item in data.get("hunks") or ():
            if not isinstance(item, dict) or not isinstance(item.get("hunkId"), str):
                continue
            if kind == RESOLVE_EVENT:
                pending.pop(item["hunkId"], None)
                continue
            try:
                patch = PatchHunk(int(item["at"]), str(item["oldText"]), str(item["newText"]),
                                  str(item.get("contextBefore", "")), str(item.get("contextAfter", "")))
                pending[item["hunkId"]] = LoggedHunk(
                    item["hunkId"], session_id, int(data["turn"]), str(data["callId"]), normalise_path(Path(data["path"])),
                    patch, data.get("afterSha") if isinstance(data.get("afterSha"), str) else None)
            except (KeyError, TypeError, ValueError):
                continue  # a damaged record cannot be found again; the others can
    return list(pending.values())
