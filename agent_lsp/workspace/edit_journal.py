"""EditJournal: what each turn changed, so `agent/turn/revert` can undo it.

The tools record every applied change per (session, turn) with the text
before and after. Reverting a turn undoes its changes newest first, through
the editor (versioned edits, resource operations), and leaves alone what the
user changed since: a hunk whose lines the user edited after the agent is
kept and reported, the rest of the file is still reverted.

Kept in memory (a bounded number of turns per session): revert is for the
turns of a live session.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from agent_lsp.agent.ports import Editor, TextEdit, TextFileEdit
from agent_lsp.tools.base import FileChange
from agent_lsp.tools.files import create_with_content, delete_path, rename_path
from agent_lsp.tools.hunks import hunks_by_diff, hunks_from_spans
from agent_lsp.tools.text import decode, is_binary, line_starts, position_of, split_keepends


@dataclass(frozen=True)
class RevertSkip:
    path: Path
    reason: str


@dataclass
class RevertReport:
    reverted: list[Path] = field(default_factory=list)
    skipped: list[RevertSkip] = field(default_factory=list)


class EditJournal:
    def __init__(self, max_turns_per_session: int = 100):
        self.max_turns = max_turns_per_session
        self._turns: dict[str, OrderedDict[int, list[FileChange]]] = {}

    def record(self, session_id: str, turn: int, change: FileChange) -> None:
        turns = self._turns.setdefault(session_id, OrderedDict())
        turns.setdefault(turn, []).append(change)
        while len(turns) > self.max_turns:
            turns.popitem(last=False)

    def changes(self, session_id: str, turn: int) -> list[FileChange]:
        return list(self._turns.get(session_id, {}).get(turn, []))

    def forget(self, session_id: str) -> None:
        self._turns.pop(session_id, None)

    async def revert(self, editor: Editor, session_id: str, turn: int) -> RevertReport:
        report = RevertReport()
        changes = self._turns.get(session_id, {}).pop(turn, [])
        label = f"agent: revert turn {turn}"
        for change in reversed(changes):
            if change.new_path is not None:
                await _revert_rename(editor, change, label, report)
            elif change.before is None:
                await _revert_create(editor, change, label, report)
            elif change.after is None:
                await _revert_delete(editor, change, label, report)
            else:
                await _revert_text(editor, change, label, report)
        # a path reverted in one change and skipped in another is reported in both
        report.reverted = list(dict.fromkeys(report.reverted))
        return report


# ------------------------------------------------------------------ helpers


def _current(editor: Editor, path: Path) -> tuple[str, int | None] | None:
    """The text the user sees now and its version, or None (missing, binary, not UTF-8)."""
    snapshot = editor.document(path)
    if snapshot is not None:
        return snapshot.text, snapshot.version
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if is_binary(data):
        return None
    decoded = decode(data)
    return None if decoded.lossy else (decoded.text, None)


async def _revert_text(editor: Editor, change: FileChange, label: str, report: RevertReport) -> None:
    path = change.path
    current = _current(editor, path)
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
    where = _line_map(after, now)  # after-line index -> current-line index, where unchanged
    offsets = [0]
    for line in now:
        offsets.append(offsets[-1] + len(line))
    starts = line_starts(text)
    edits: list[TextEdit] = []
    kept = 0
    for hunk in hunks:
        target = _mapped_range(where, hunk.a1, hunk.a2, len(after))
        if target is None:
            kept += 1
            continue
        c1, c2 = target
        start, end = position_of(starts, offsets[c1]), position_of(starts, offsets[c2])
        edits.append(TextEdit(start, end, "".join(before[hunk.b1 : hunk.b2])))
    if edits:
        result = await editor.apply_edit([TextFileEdit(path, tuple(edits), version)], label)
        if not result.applied:
            report.skipped.append(RevertSkip(path, f"the editor refused the revert: {result.failure_reason}"))
            return
        await editor.save([path])
        report.reverted.append(path)
    if kept:
        report.skipped.append(
            RevertSkip(path, f"{kept} of {len(hunks)} changes were edited since; left as they are")
        )


def _line_map(old: list[str], new: list[str]) -> dict[int, int]:
    """Old line index -> new line index for the lines that did not change."""
    if old == new:
        return {i: i for i in range(len(old))}
    mapping: dict[int, int] = {}
    for hunk_free in _unchanged_runs(old, new):
        a, b, size = hunk_free
        for k in range(size):
            mapping[a + k] = b + k
    return mapping


def _unchanged_runs(old: list[str], new: list[str]) -> list[tuple[int, int, int]]:
    """(old start, new start, length) of the equal runs, via the trimmed line diff."""
    runs = []
    a = b = 0
    for hunk in hunks_by_diff(old, new):
        if hunk.b1 > a:
            runs.append((a, b, hunk.b1 - a))
        a, b = hunk.b2, hunk.a2
    if a < len(old):
        runs.append((a, b, len(old) - a))
    return runs


def _mapped_range(where: dict[int, int], i1: int, i2: int, n_old: int) -> tuple[int, int] | None:
    """Where after-lines [i1, i2) are in the current text, if the user left them unchanged
    (for a pure insertion: if the lines around the insertion point are unchanged)."""
    if i1 < i2:
        first, last = where.get(i1), where.get(i2 - 1)
        if first is None or last is None or last - first != i2 - i1 - 1:
            return None
        if any(where.get(k) != first + (k - i1) for k in range(i1, i2)):
            return None
        return first, last + 1
    # a pure insertion: anchor on the line before (or after, at the top)
    if i1 > 0:
        before = where.get(i1 - 1)
        if before is None or (i1 < n_old and where.get(i1) != before + 1):
            return None
        return before + 1, before + 1
    if n_old == 0:
        return 0, 0
    anchor = where.get(0)
    return None if anchor is None else (anchor, anchor)


async def _revert_create(editor: Editor, change: FileChange, label: str, report: RevertReport) -> None:
    if not change.path.exists() and editor.document(change.path) is None:
        report.reverted.append(change.path)  # already gone
        return
    current = _current(editor, change.path)
    if current is None or current[0] != change.after:
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
