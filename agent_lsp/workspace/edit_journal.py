"""EditJournal: what each turn changed, so `agent/turn/revert` can undo it.

The tools record every applied change per (session, turn) with the text
before and after. Reverting a turn undoes its changes newest first, through
the editor (versioned edits, resource operations), and leaves alone what the
user changed since: a hunk whose lines the user edited after the agent is
kept and reported, the rest of the file is still reverted.

Kept in memory (a bounded number of turns per session) while the server
runs; the session log is the source of truth. Every file tool writes the
durable record of its change in its result (`meta["journal"]`, see
`agent_lsp.tools.journal_record`), and `rebuild(session_id, events)` reads
them back, so a turn of a session from an earlier server run can be reverted
too. A rebuilt text change has line hunks with context instead of the whole
texts: each hunk is found again in the current text (near where it was, by
its context) like `patch` does; a hunk whose lines or context the user
changed is left alone and reported.

A revert is durable too: the host appends a `turn/revert` event (see
`revert_event_data`) to the session log, and `rebuild` reads those back, so
a turn reverted before a restart is not reverted again: a second revert of
it does nothing and says when the first one happened.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from agent_lsp.agent.ports import Editor, TextEdit, TextFileEdit
from agent_lsp.tools.files import create_with_content, delete_path, rename_path
from agent_lsp.tools.hunks import hunks_by_diff, hunks_from_spans
from agent_lsp.tools.journal_record import FileChange, PatchHunk, from_record, text_digest
from agent_lsp.tools.text import line_starts, position_of, split_keepends
from agent_lsp.workspace.hunk_places import current_text, exact_places, find_places, line_map, mapped_range


@dataclass(frozen=True)
class RevertSkip:
    path: Path
    reason: str


@dataclass
class RevertReport:
    reverted: list[Path] = field(default_factory=list)
    skipped: list[RevertSkip] = field(default_factory=list)
    # epoch ms of this revert; None when nothing was done (the turn had no
    # changes, or was reverted before): only a revert with a time is recorded
    reverted_at: int | None = None
    already_reverted_at: int | None = None  # the turn was reverted before, at this time


@dataclass(frozen=True)
class RevertedTurn:
    """A revert that happened: when, and the files it was about."""

    at: int  # epoch ms
    paths: tuple[Path, ...]


REVERT_EVENT = "turn/revert"  # the durable record of a revert in the session log


def revert_event_data(turn: int, report: RevertReport) -> dict[str, Any]:
    """The data of the `turn/revert` event that records a revert."""
    return {
        "turn": turn,
        "reverted": [str(path) for path in report.reverted],
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in report.skipped],
    }


def format_revert_time(at_ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at_ms / 1000))


def already_reverted_reason(turn: int, at_ms: int) -> str:
    return f"turn {turn} was already reverted at {format_revert_time(at_ms)}"


class EditJournal:
    def __init__(self, max_turns_per_session: int = 100):
        self.max_turns = max_turns_per_session
        self._turns: dict[str, OrderedDict[int, list[FileChange]]] = {}
        self._rebuilt: set[str] = set()  # sessions whose log was read (rebuild)
        # reverted turns: not to be brought back by a rebuild, nor reverted twice
        self._reverted: dict[tuple[str, int], RevertedTurn] = {}

    def record(self, session_id: str, turn: int, change: FileChange) -> None:
        turns = self._turns.setdefault(session_id, OrderedDict())
        turns.setdefault(turn, []).append(change)
        while len(turns) > self.max_turns:
            turns.popitem(last=False)

    def changes(self, session_id: str, turn: int) -> list[FileChange]:
        return list(self._turns.get(session_id, {}).get(turn, []))

    def forget(self, session_id: str) -> None:
        self._turns.pop(session_id, None)
        self._rebuilt.discard(session_id)
        self._reverted = {key: done for key, done in self._reverted.items() if key[0] != session_id}

    def is_rebuilt(self, session_id: str) -> bool:
        return session_id in self._rebuilt

    def rebuild(self, session_id: str, events: Iterable[Any]) -> int:
        """Add the turns of the session log (`tool/result` events whose meta has
        journal records) that this journal does not hold yet, and the reverts
        it records (`turn/revert` events): a reverted turn's changes before its
        revert are not brought back. Turns reverted while this server runs stay
        reverted. Returns how many changes were added."""
        known = set(self._turns.get(session_id, {}))
        reverted_here = {turn for sid, turn in self._reverted if sid == session_id}
        added = 0
        by_turn: dict[int, list[FileChange]] = {}
        for event in events:
            kind, data = _event_parts(event)
            if not isinstance(data, dict):
                continue
            if kind == REVERT_EVENT:
                self._read_revert(session_id, event, data, by_turn)
                continue
            if kind != "tool/result":
                continue
            meta = data.get("meta") or {}
            turn = data.get("turn")
            if not isinstance(meta, dict) or not isinstance(turn, int) or turn in known or turn in reverted_here:
                continue
            for record in meta.get("journal") or ():
                try:
                    by_turn.setdefault(turn, []).append(from_record(record))
                except (ValueError, KeyError, TypeError):
                    continue  # a damaged record is not revertible; the others are
        turns = self._turns.setdefault(session_id, OrderedDict())
        for turn in sorted(by_turn):
            turns[turn] = by_turn[turn]
            added += len(by_turn[turn])
        self._turns[session_id] = OrderedDict(sorted(turns.items()))
        while len(self._turns[session_id]) > self.max_turns:
            self._turns[session_id].popitem(last=False)
        self._rebuilt.add(session_id)
        return added

    def _read_revert(self, session_id: str, event: Any, data: dict[str, Any], by_turn: dict[int, list[FileChange]]) -> None:
        turn = data.get("turn")
        if not isinstance(turn, int):
            return
        by_turn.pop(turn, None)  # undone by this revert
        paths = [str(p) for p in data.get("reverted") or () if isinstance(p, str)]
        paths += [str(s.get("path")) for s in data.get("skipped") or () if isinstance(s, dict) and s.get("path")]
        self._reverted[(session_id, turn)] = RevertedTurn(_event_time(event), tuple(Path(p) for p in dict.fromkeys(paths)))

    async def revert(self, editor: Editor, session_id: str, turn: int) -> RevertReport:
        """Undo one turn's changes. A turn reverted before (and changed by no
        tool since) is not touched again: the report reverts nothing and skips
        each of its files with the reason "turn N was already reverted at …"."""
        report = RevertReport()
        changes = self._turns.get(session_id, {}).pop(turn, [])
        if not changes:
            done = self._reverted.get((session_id, turn))
            if done is not None:
                reason = already_reverted_reason(turn, done.at)
                report.skipped = [RevertSkip(path, reason) for path in done.paths]
                report.already_reverted_at = done.at
            return report
        # marked at once: a second request while this one runs is "already reverted" too
        self._reverted[(session_id, turn)] = RevertedTurn(int(time.time() * 1000), tuple(dict.fromkeys(c.path for c in changes)))
        label = f"agent: revert turn {turn}"
        for change in reversed(changes):
            if change.new_path is not None:
                await _revert_rename(editor, change, label, report)
            elif change.patch is not None:
                await _revert_patch(editor, change, label, report)
            elif change.deleted or (change.after is None and change.before is not None):
                await _revert_delete(editor, change, label, report)
            elif change.before is None:
                await _revert_create(editor, change, label, report)
            else:
                await _revert_text(editor, change, label, report)
        # a path reverted in one change and skipped in another is reported in both
        report.reverted = list(dict.fromkeys(report.reverted))
        paths = report.reverted + [s.path for s in report.skipped] or [change.path for change in changes]
        report.reverted_at = int(time.time() * 1000)  # when it ended: the caller records it right away
        self._reverted[(session_id, turn)] = RevertedTurn(report.reverted_at, tuple(dict.fromkeys(paths)))
        return report


# ------------------------------------------------------------------ helpers


async def _revert_text(editor: Editor, change: FileChange, label: str, report: RevertReport) -> None:
    path = change.path
    current = current_text(editor, path)
    if current is None:
        report.skipped.append(RevertSkip(path, "the file no longer exists or is not text"))
        return
    text, version = current
    before_text, after_text = change.before or "", change.after or ""
    before, after, now = split_keepends(before_text), split_keepends(after_text), split_keepends(text)
    if change.spans is not None:
        hunks = hunks_from_spans(before_text, list(change.spans))
    else:
        hunks = hunks_by_diff(before, after)
    where = line_map(after, now)  # after-line index -> current-line index, where unchanged
    undone = line_map(before, now)  # the same for the text before the change
    placed = []
    for hunk in hunks:
        place = mapped_range(where, hunk.a1, hunk.a2, len(after))
        if place is None and mapped_range(undone, hunk.b1, hunk.b2, len(before)) is not None:
            continue  # its old lines are back already (the user undid it, e.g. with Ctrl+Z): done
        placed.append((place, "".join(before[hunk.b1 : hunk.b2])))
    if not placed:
        await editor.save([path])
        report.reverted.append(path)  # as it was before the turn
        return
    await _apply_placed(editor, path, text, version, placed, label, report)


async def _apply_placed(
    editor: Editor,
    path: Path,
    text: str,
    version: int | None,
    placed: list[tuple[tuple[int, int] | None, str]],
    label: str,
    report: RevertReport,
) -> None:
    """Put each hunk's old text back over the current lines [c1, c2) it was
    found at; a hunk not found (None) is left alone and reported."""
    offsets = [0]
    for line in split_keepends(text):
        offsets.append(offsets[-1] + len(line))
    starts = line_starts(text)
    edits: list[TextEdit] = []
    for place, old in placed:
        if place is not None:
            c1, c2 = place
            edits.append(TextEdit(position_of(starts, offsets[c1]), position_of(starts, offsets[c2]), old))
    kept = len(placed) - len(edits)
    if edits:
        result = await editor.apply_edit([TextFileEdit(path, tuple(edits), version)], label)
        if not result.applied:
            report.skipped.append(RevertSkip(path, f"the editor refused the revert: {result.failure_reason}"))
            return
        await editor.save([path])
        report.reverted.append(path)
    if kept:
        report.skipped.append(
            RevertSkip(path, f"{kept} of {len(placed)} changes were edited since; left as they are")
        )


async def _revert_create(editor: Editor, change: FileChange, label: str, report: RevertReport) -> None:
    if not change.path.exists() and editor.document(change.path) is None:
        report.reverted.append(change.path)  # already gone
        return
    current = current_text(editor, change.path)
    if change.after is None and change.after_sha is not None:
        unchanged = current is not None and text_digest(current[0]) == change.after_sha
    else:
        unchanged = current is not None and current[0] == change.after
    if not unchanged:
        report.skipped.append(RevertSkip(change.path, "the file was changed after the agent created it"))
        return
    result = await delete_path(editor, change.path, label)
    if result.applied:
        report.reverted.append(change.path)
    else:
        report.skipped.append(RevertSkip(change.path, f"could not delete it: {result.failure_reason}"))


async def _revert_delete(editor: Editor, change: FileChange, label: str, report: RevertReport) -> None:
    if change.path.exists() or editor.document(change.path) is not None:
        report.skipped.append(RevertSkip(change.path, "a file exists at that path again"))
        return
    if change.before is None:
        report.skipped.append(RevertSkip(change.path, "its text was too big to keep in the session log"))
        return
    result = await create_with_content(editor, change.path, change.before or "", label)
    if result.applied:
        report.reverted.append(change.path)
    else:
        report.skipped.append(RevertSkip(change.path, f"could not recreate it: {result.failure_reason}"))


async def _revert_rename(editor: Editor, change: FileChange, label: str, report: RevertReport) -> None:
    assert change.new_path is not None
    if not change.new_path.exists():
        report.skipped.append(RevertSkip(change.path, f"{change.new_path} no longer exists"))
        return
    if change.path.exists():
        report.skipped.append(RevertSkip(change.path, "a file exists at the old path again"))
        return
    result = await rename_path(editor, change.new_path, change.path, label)
    if result.applied:
        report.reverted.append(change.path)
    else:
        report.skipped.append(RevertSkip(change.path, f"could not rename it back: {result.failure_reason}"))


# ------------------------------------------------------- rebuilt (patch) changes


def _event_parts(event: Any) -> tuple[Any, Any]:
    if isinstance(event, dict):
        return event.get("type"), event.get("data")
    return getattr(event, "type", None), getattr(event, "data", None)


def _event_time(event: Any) -> int:
    at = event.get("time") if isinstance(event, dict) else getattr(event, "time", None)
    return int(at) if isinstance(at, (int, float)) else 0


async def _revert_patch(editor: Editor, change: FileChange, label: str, report: RevertReport) -> None:
    """Undo a change known by its hunks (rebuilt from the log): each hunk is
    found by its lines and context near where it was; a hunk the user edited
    (or whose context they edited) is left alone and reported."""
    path = change.path
    current = current_text(editor, path)
    if current is None:
        report.skipped.append(RevertSkip(path, "the file no longer exists or is not text"))
        return
    text, version = current
    now = split_keepends(text)
    hunks: list[PatchHunk] = list(change.patch or ())
    exact = change.after_sha is not None and text_digest(text) == change.after_sha
    places = exact_places(hunks) if exact else find_places(now, hunks)
    await _apply_placed(editor, path, text, version, [(place, h.old) for h, place in zip(hunks, places)], label, report)
