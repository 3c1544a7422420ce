"""Undoing reviewed hunks across files, crash-safe.

An undo of a session's pending hunks (one, a file's or all of them) puts
their old lines back file after file through the editor, then records a
`review/resolve` event per file and tells the model what the user rejected.
As for a turn revert (revert_intent.py), the intent is written before the
first file is touched: a process killed in between is found at the next
start, and either every file is put back as it was before the undo (nothing
recorded: the hunks are pending again) or, every file being done, the
events are appended and the model's messages queued. Never some files
undone and others not, with the log saying otherwise.

The intent holds each file's bytes on disk: where the editor holds a file in
an unsaved buffer, the undo changes the buffer, which is the editor's to
keep, and the disk is left as it was; the message of a recovery names those
files, for the user to look at before saving.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from agent_lsp.agent.inbox import new_message_id
from agent_lsp.agent.ports import Editor, TextEdit, TextFileEdit
from agent_lsp.tools.hunks import unified_diff
from agent_lsp.tools.paths import WorkspaceRoots
from agent_lsp.tools.text import line_starts, position_of, split_keepends
from agent_lsp.workspace.hunk_places import current_text

if TYPE_CHECKING:
    from agent_lsp.store import Session
    from agent_lsp.workspace.revert_intent import RevertIntent, RevertIntents

log = logging.getLogger(__name__)

Placed = Any  # edit_review.PlacedHunk: a hunk (.hunk: its .old text, .turn) at lines [.start, .end)

OPERATION = "review-undo"
MESSAGE_SOURCE = "review"


@dataclass
class FileUndo:
    """One file's undo, done: what is recorded once every file is."""

    path: Path
    placed: list[Placed]
    diff: str  # the rejected change, as the model is told
    shown: str  # the file's name as the user reads it


async def undo_files(editor: Editor, root: Path, intents: RevertIntents | None, session: Session,
                     by_file: dict[Path, list[Placed]]) -> tuple[list[FileUndo], dict[Path, str], RevertIntent | None]:
    """Put back the old lines of each file's hunks, the intent written first (a
    failure in this process puts back the files already done and raises). The
    undos done, why each file not undone was not, and the intent left to record
    them with (`record_undos`)."""
    intent = None
    if intents is not None and by_file:
        intent = intents.begin(session, OPERATION, max(p.hunk.turn for ps in by_file.values() for p in ps), by_file,
                               buffers=[path for path in by_file if editor.document(path) is not None])
    done: list[FileUndo] = []
    skipped: dict[Path, str] = {}
    try:
        for path, placed in by_file.items():
            result = await _undo_file(editor, root, path, placed)
            if isinstance(result, str):
                skipped[path] = result
            else:
                done.append(result)
    except BaseException:
        if intent is not None:
            intents.roll_back(intent)  # type: ignore[union-attr]
        raise
    if intent is not None and not done:
        intents.finish(intent)  # type: ignore[union-attr]
        intent = None
    return done, skipped, intent


def record_undos(intents: RevertIntents | None, intent: RevertIntent | None, session: Session, undos: list[FileUndo],
                 event: Callable[[FileUndo], tuple[str, dict[str, Any]]],
                 tell: Callable[[dict[str, Any]], None]) -> None:
    """Record the undos (`event` makes each one's event) and tell the model (`tell`
    queues a message): the intent holds both first, so a crash in between ends
    with both done at the next start."""
    if not undos:
        return
    events = [(*event(u), None) for u in undos]
    messages = [model_message(u) for u in undos]
    if intents is not None and intent is not None:
        intents.commit(intent, events, messages)  # type: ignore[union-attr]
    for type_, data, _ in events:
        session.append(type_, data)
    for message in messages:
        tell(message)
    try:
        session.flush()
    except OSError:
        log.exception("recording an undo of reviewed changes in %s", session.id)
        return  # the intent stays: the next load appends what the log lacks
    if intents is not None and intent is not None:
        intents.finish(intent)  # type: ignore[union-attr]


def model_message(undo: FileUndo) -> dict[str, Any]:
    """What the model is told of one file's undo (and what clients show instead)."""
    return {
        "id": new_message_id(),
        "content": f"The user rejected this change of yours and undid it:\n{undo.diff}\n"
                   "Do not make this change again unless the user asks for it.",
        "source": MESSAGE_SOURCE,
        "note": {"kind": "undo", "text": f"↶ you undid a change in {undo.shown}"},
    }


async def _undo_file(editor: Editor, root: Path, file: Path, placed: list[Placed]) -> FileUndo | str:
    """Put the hunks' old lines back in one file; why not, when not done."""
    current = current_text(editor, file)
    if current is None:
        return "the file no longer exists or is not text"
    text, version = current
    offsets = [0]
    for line in split_keepends(text):
        offsets.append(offsets[-1] + len(line))
    starts = line_starts(text)
    edits = tuple(
        TextEdit(position_of(starts, offsets[p.start]), position_of(starts, offsets[p.end]), p.hunk.old)
        for p in placed
    )
    # "review" whatever the setting is now: a plugin must not save the buffer while
    # another hunk of it is pending; the review saves it once none is
    result = await editor.apply_edit([TextFileEdit(file, edits, version)], "agent: undo change", review="review")
    if not result.applied:
        return f"the editor refused the undo: {result.failure_reason}"
    undone = "".join(_replaced(text, offsets, placed))
    shown = WorkspaceRoots([root]).display(file)
    return FileUndo(file, placed, unified_diff(undone, text, shown), shown)


def _replaced(text: str, offsets: list[int], placed: list[Placed]) -> list[str]:
    """The pieces of `text` with each placed hunk's lines replaced by its old text."""
    pieces, cursor = [], 0
    for p in sorted(placed, key=lambda p: p.start):
        pieces.append(text[cursor : offsets[p.start]])
        pieces.append(p.hunk.old)
        cursor = offsets[p.end]
    pieces.append(text[cursor:])
    return pieces
