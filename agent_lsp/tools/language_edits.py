"""A language server's edits of several files, applied as ONE editor edit.

Like edit_file's single-file path (`agent_lsp.tools.edit.apply_text_change`):
each file's edits are computed on the text the user sees (buffer or disk) and
sent at its version, the "edits.review" mode is read once and followed, every
file's change is journaled; but all files go out in one `Editor.apply_edit`,
so the editor applies them together and one undo takes them back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_lsp.agent.ports import TextEdit, TextFileEdit, ToolContext
from agent_lsp.tools.base import FileText, ToolEnv, ToolError, read_text, unless_aborted
from agent_lsp.tools.edit import ask_before_editing, conflict_error
from agent_lsp.tools.journal_record import FileChange
from agent_lsp.tools.language_port import FileEdits
from agent_lsp.tools.text import line_starts, offset_of, replace_spans


@dataclass
class AppliedEdits:
    records: list[dict[str, Any]] = field(default_factory=list)
    texts: dict[Path, str | None] = field(default_factory=dict)  # each file's new text
    pending: bool = False
    unsaved: list[Path] = field(default_factory=list)  # left unsaved: the buffers hold the user's changes


async def apply_file_edits(env: ToolEnv, ctx: ToolContext, edits: list[FileEdits], label: str) -> AppliedEdits:
    planned: list[tuple[FileText, list[tuple[int, int, str]], str]] = []
    for file_edits in edits:
        file = read_text(env, file_edits.path, env.show(file_edits.path))
        starts = line_starts(file.text)
        spans = sorted((offset_of(file.text, starts, start), offset_of(file.text, starts, end), new)
                       for start, end, new in file_edits.edits)
        planned.append((file, spans, replace_spans(file.text, spans)))
    mode = env.review_mode
    if mode == "ask":
        for file, spans, new_text in planned:
            await ask_before_editing(env, ctx, file, new_text, env.show(file.path), spans)
    operations = [TextFileEdit(file.path, tuple(TextEdit(start, end, new) for start, end, new in
                                                _positions(file_edits)), file.version if file.is_open else None)
                  for (file, _, _), file_edits in zip(planned, edits)]
    result = await unless_aborted(
        ctx, env.editor.apply_edit(operations, label, review=mode),
        "The turn was cancelled while the editor was applying the edit; its answer was dropped. "
        "The editor may still apply it: read the files before editing them again.")
    if not result.applied:
        raise conflict_error(env, planned[0][0], result.failure_reason)
    applied = AppliedEdits(pending=env.review is not None and mode == "review")
    for file, spans, new_text in planned:
        change = FileChange(file.path, file.text, new_text, spans=tuple(spans))
        applied.records.append(env.record(ctx, change))
        applied.texts[file.path] = new_text
        if applied.pending and env.review is not None:
            env.review.hold(ctx, change)
    if not applied.pending:
        try:
            applied.unsaved = await unless_aborted(ctx, env.editor.save([f.path for f, _, _ in planned]),
                                 "The edit was applied, but the turn was cancelled before the editor saved it.")
        except ToolError as error:
            error.meta = {**(error.meta or {}), "journal": applied.records}
            raise
    return applied


def _positions(file_edits: FileEdits):
    return sorted(file_edits.edits)
