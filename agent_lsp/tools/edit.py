"""edit_file: exact-text replacements that land in the editor's buffer.

Each edit names text that exists now (`oldText`) and what replaces it. All
edits of one call are located in the file as it is when the call starts (the
open buffer if the editor has it, else disk), must not overlap, and go out as
ONE versioned text edit through `Editor.apply_edit` (for the LSP editor: a
`workspace/applyEdit` with a `TextDocumentEdit` at the buffer's version and a
label, so it is one step on the editor's undo stack).

Whole lines an edit leaves as they are (the context the model quoted to make
oldText unique) are trimmed off, so only the changed lines are replaced in the
buffer. Many edits in one call are located with a word index built once
(`OccurrenceFinder`), not a whole-file scan per edit.

Conflicts are never resolved silently: when the editor refuses the edit
(`applied: false`, e.g. the user typed since the version we computed on), the
tool re-reads the file and returns an error carrying its fresh text, and the
model edits again against that.

Cancel: a turn cancelled while the editor has not answered the applyEdit (or
a permission question) does not wait for it: the tool returns ABORTED at once
and says the editor may still apply the edit.

The result's `meta["journal"]` is the durable record of the change (see
`agent_lsp.tools.journal_record`): turn revert works from the session log.

Edits visible to what runs next: after every applied edit the tool calls
`Editor.save([path])`, so a command run next (tests, linters) reads the edited
text from disk. An editor may leave a buffer that holds the user's own unsaved
changes unsaved (saving would write them too): the result tells the model
that the file on disk is unchanged. The LSP editor asks clients that declared
`agentLsp.saveDocuments` to save, and otherwise writes the buffer text to disk
itself; files the editor has not opened are written to disk when the edit is
applied (client or fallback), so saving them is a no-op.

The `edits.review` setting (`ToolEnv.review`) changes this: in "review" the
applied change is held for the user's keep/undo and not saved (the user's
review saves it, `agent_lsp.workspace.edit_review`); in "ask" the user
approves the diff before the edit is sent (`ask_before_editing`). The mode is
read once per edit and carried with it (asked, sent to the editor, then held
or saved): a settings change while the edit is on its way cannot leave it
both saved and pending.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from agent_lsp.agent.ports import PermissionRequest, TextEdit, TextFileEdit, ToolContext, ToolOutput
from agent_lsp.tools.base import (
    BuiltinTool,
    FileText,
    ToolEnv,
    ToolError,
    ToolInput,
    read_text,
    unless_aborted,
)
from agent_lsp.tools.hunks import unified_diff
from agent_lsp.tools.journal_record import FileChange
from agent_lsp.tools.problems import problems_before, with_problems
from agent_lsp.tools.text import line_starts, position_of, replace_spans, split_lines

MAX_FRESH_TEXT_CHARS = 20_000
MAX_DIFF_CHARS = 8_000
MAX_CANDIDATES = 5
INDEX_FROM_EDITS = 16  # from this many edits in one call, index the text's words once

_WORD = re.compile(r"\w+")
# the result's note when "edits.review" is "review"
PENDING_REVIEW_NOTE = (
    "The change is in the editor's buffer, unsaved, waiting for the user to keep or undo it: "
    "commands still see the file on disk as it was."
)


def unsaved_note(shown: list[str]) -> str:
    """The result's note for files the editor left unsaved: their buffers hold the user's own changes."""
    return (f"{', '.join(shown)}: left unsaved in the editor because it has the user's unsaved changes; "
            "the file on disk is unchanged, so commands run next do not see this edit.")


class EditSpec(ToolInput):
    old_text: str = Field(description="exact text as it is in the file now, whitespace included, with enough "
                          "lines around it to be unique")
    new_text: str
    replace_all: bool = Field(default=False, description="replace every occurrence, not just one")


class EditFileInput(ToolInput):
    path: str
    edits: list[EditSpec] = Field(min_length=1, description="located in the file as it is before this call; "
                                  "they must not overlap")


class EditFile(BuiltinTool):
    name = "edit_file"
    description = (
        "Edit a file by replacing exact text; each oldText must occur once (or set replaceAll). "
        "The file is saved, so commands run next see the change."
    )
    input_model = EditFileInput
    parallel = False

    async def execute(self, args: EditFileInput, ctx: ToolContext) -> ToolOutput:
        path = self.env.resolve(args.path)
        shown = self.env.show(path)
        if not path.exists() and self.env.editor.document(path) is None:
            raise ToolError(f"'{shown}' does not exist; use create_file to make it", "NOT_FOUND")
        file = read_text(self.env, path, shown)
        if file.lossy:
            raise ToolError(
                f"'{shown}' is not valid UTF-8; editing it would corrupt it", "NOT_UTF8"
            )
        spans = locate_edits(file.text, args.edits, shown)
        new_text = replace_spans(file.text, spans)
        if new_text == file.text:
            raise ToolError("the edits change nothing (newText equals oldText)", "NO_CHANGE")
        await self.env.authorize(
            ctx,
            PermissionRequest(tool=self.name, title=f"Edit {shown}", kind="write", path=path),
        )
        checked = await problems_before(self.env.edit_language, [path])
        applied = await apply_text_change(self.env, ctx, file, spans, new_text, label=f"agent: edit {shown}")
        diff = unified_diff(file.text, new_text, shown, spans)
        removed, added = _count_diff(diff)
        summary = f"Edited {shown}: {len(spans)} replacement{'s' if len(spans) != 1 else ''} (+{added} -{removed} lines)."
        if applied.pending:
            summary += " " + PENDING_REVIEW_NOTE
        elif applied.unsaved:
            summary += " " + unsaved_note([shown])
        output = ToolOutput(
            content=summary + "\n" + _cap(diff, MAX_DIFF_CHARS),
            meta={"path": shown, "diff": diff, "replacements": len(spans), "journal": [applied.record]},
        )
        return await with_problems(self.env.edit_language, checked, {path: new_text}, output, self.env.show)


# ------------------------------------------------------------ locating text


def locate_edits(text: str, edits: list[EditSpec], shown: str) -> list[tuple[int, int, str]]:
    """(start, end, new text) spans in `text`, sorted; ToolError naming every bad edit."""
    crlf = "\r\n" in text
    spans: list[tuple[int, int, str, int]] = []
    problems: list[str] = []
    finder = OccurrenceFinder(text, indexed=len(edits) >= INDEX_FROM_EDITS)
    for number, edit in enumerate(edits, 1):
        old, new = edit.old_text, edit.new_text
        if crlf and "\r" not in old and "\n" in old:
            # the model writes "\n"; the file says "\r\n"
            old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
        if old == "":
            if text == "" and len(edits) == 1:
                spans.append((0, 0, new, number))
                continue
            problems.append(f"edit {number}: oldText is empty (use write_file to replace a whole file)")
            continue
        starts = finder.occurrences(old)
        if not starts:
            problems.append(f"edit {number}: oldText not found in {shown}. {_near_misses(text, edit.old_text)}")
        elif len(starts) > 1 and not edit.replace_all:
            lines = ", ".join(str(_line_of(text, s)) for s in starts[:10])
            problems.append(
                f"edit {number}: oldText occurs {len(starts)} times in {shown} (lines {lines}); include more "
                "surrounding text to pick one, or set replaceAll"
            )
        else:
            spans.extend((s, s + len(old), new, number) for s in starts)
    if problems:
        raise ToolError("No edit was applied.\n" + "\n".join(problems), "EDIT_NOT_APPLICABLE")
    spans.sort()
    for (_, e1, _, n1), (s2, _, _, n2) in zip(spans, spans[1:]):
        if s2 < e1:
            raise ToolError(
                f"No edit was applied: edits {n1} and {n2} overlap (line {_line_of(text, s2)}); "
                "merge them into one edit",
                "EDIT_NOT_APPLICABLE",
            )
    return [_trimmed(text, s, e, new) for s, e, new, _ in spans]


def _trimmed(text: str, start: int, end: int, new: str) -> tuple[int, int, str]:
    """The span without the whole lines it leaves as they are (the context lines
    the model quoted to make oldText unique), so the editor changes only the
    lines that change (marks, folds and the cursor on the others stay put) and
    the diff shows only them."""
    old = text[start:end]
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    prefix = old.rfind("\n", 0, prefix) + 1  # whole lines only
    if suffix:
        newline = old.find("\n", max(0, len(old) - suffix - 1))
        suffix = len(old) - (newline + 1) if newline >= 0 else 0
    return start + prefix, end - suffix, new[prefix : len(new) - suffix]


def _occurrences(text: str, old: str) -> list[int]:
    found = []
    i = text.find(old)
    while i >= 0:
        found.append(i)
        i = text.find(old, i + len(old))
    return found


class OccurrenceFinder:
    """Every non-overlapping occurrence of an oldText, without a whole-file scan per edit.

    A scan per edit makes a 1,000-edit call on a big file quadratic. With many
    edits, the text's words (maximal \\w+ runs) are indexed once. A word of
    oldText that touches neither end of it is a whole word of the text wherever
    oldText occurs, at the same offset: so that word's positions (the rarest
    such word is used) are all the candidates, checked one by one. The result
    is exactly what the scan finds; an oldText with no inner word is scanned.
    """

    def __init__(self, text: str, indexed: bool):
        self.text = text
        self.indexed = indexed
        self._words: dict[str, list[int]] | None = None

    def occurrences(self, old: str) -> list[int]:
        if not self.indexed:
            return _occurrences(self.text, old)
        anchor = self._rarest_inner_word(old)
        if anchor is None:
            return _occurrences(self.text, old)
        word, offset = anchor
        found: list[int] = []
        end = 0
        for position in self.words.get(word, ()):
            start = position - offset
            if start >= end and self.text.startswith(old, start):
                found.append(start)
                end = start + len(old)
        return found

    @property
    def words(self) -> dict[str, list[int]]:
        if self._words is None:
            index: dict[str, list[int]] = {}
            for match in _WORD.finditer(self.text):
                index.setdefault(match.group(), []).append(match.start())
            self._words = index
        return self._words

    def _rarest_inner_word(self, old: str) -> tuple[str, int] | None:
        best: tuple[str, int] | None = None
        best_count = -1
        for match in _WORD.finditer(old):
            if match.start() == 0 or match.end() == len(old):
                continue  # may be part of a longer word of the text
            count = len(self.words.get(match.group(), ()))
            if best is None or count < best_count:
                best, best_count = (match.group(), match.start()), count
                if count <= 1:
                    break
        return best


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _near_misses(text: str, old: str) -> str:
    """Name the lines the model probably meant."""
    lines = split_lines(text)
    wanted = [l.strip() for l in split_lines(old) if l.strip()]
    if not wanted:
        return "oldText has only whitespace."
    # same lines with different indentation/whitespace
    stripped = [l.strip() for l in lines]
    n = len(wanted)
    hits = [i + 1 for i in range(len(lines) - n + 1) if stripped[i : i + n] == wanted]
    if hits:
        where = ", ".join(map(str, hits[:MAX_CANDIDATES]))
        return f"The same lines with different whitespace are at line {where}; copy them exactly (read_file shows them)."
    first = wanted[0]
    hits = [i + 1 for i, l in enumerate(stripped) if first in l]
    if hits:
        where = ", ".join(map(str, hits[:MAX_CANDIDATES]))
        return f"Its first line appears at line {where}, but the following lines differ; read the file again."
    close = difflib.get_close_matches(first, stripped, n=MAX_CANDIDATES, cutoff=0.6)
    if close:
        numbers = sorted({stripped.index(c) + 1 for c in close})
        where = "; ".join(f"line {i}: {lines[i - 1].strip()[:80]}" for i in numbers)
        return f"Closest lines: {where}."
    return "Nothing similar is in the file; read it again before editing."


# ------------------------------------------------------------------ applying


@dataclass(frozen=True)
class AppliedChange:
    record: dict[str, Any]  # the change's journal record (for the result's meta["journal"])
    pending: bool  # held unsaved for the user's keep/undo ("review"), rather than saved
    unsaved: bool = False  # the editor did not save it: the buffer holds the user's unsaved changes


async def apply_text_change(
    env: ToolEnv,
    ctx: ToolContext,
    file: FileText,
    spans: list[tuple[int, int, str]],
    new_text: str,
    label: str,
    exact: bool = True,
) -> AppliedChange:
    """Send the spans as one versioned edit; on refusal raise with the fresh text.

    `exact`: the spans are the real changes (edit_file), so the journal can undo
    them one by one; a whole rewrite is not (the journal diffs it instead)."""
    starts = line_starts(file.text)
    edits = tuple(TextEdit(position_of(starts, s), position_of(starts, e), new) for s, e, new in spans)
    shown = env.show(file.path)
    # Once: the editor is told this mode with the edit (a plugin saves it unless
    # "review"), so holding or saving it after it landed must follow the same one.
    mode = env.review_mode
    if mode == "ask":
        await ask_before_editing(env, ctx, file, new_text, shown, spans if exact else None)
    result = await unless_aborted(
        ctx,
        env.editor.apply_edit([TextFileEdit(file.path, edits, file.version if file.is_open else None)], label,
                              review=mode),
        f"The turn was cancelled while the editor was applying the edit to {shown}; its answer was "
        "dropped. The editor may still apply it: read the file before editing it again.",
    )
    if not result.applied:
        raise conflict_error(env, file, result.failure_reason)
    change = FileChange(file.path, file.text, new_text, spans=tuple(spans) if exact else None)
    record = env.record(ctx, change)
    if env.review is not None and mode == "review":
        env.review.hold(ctx, change)  # saved once the user has kept or undone its hunks
        return AppliedChange(record, pending=True)
    try:
        unsaved = await unless_aborted(
            ctx,
            env.editor.save([file.path]),
            f"The edit to {shown} was applied, but the turn was cancelled before the editor saved it.",
        )
    except ToolError as e:
        e.meta = {**(e.meta or {}), "path": shown, "journal": [record]}
        raise
    return AppliedChange(record, pending=False, unsaved=bool(unsaved))


async def ask_before_editing(
    env: ToolEnv, ctx: ToolContext, file: FileText, new_text: str, shown: str, spans: list[tuple[int, int, str]] | None
) -> None:
    """`edits.review` "ask": the user approves this edit's diff before it is sent; a
    denial (or no answer) is a PERMISSION_DENIED tool error the model sees."""
    diff = unified_diff(file.text, new_text, shown, spans)
    request = PermissionRequest(
        tool=ctx.name, title=f"Apply this edit to {shown}?", kind="write", path=file.path, session_id=ctx.session_id,
        choices=("once", "deny"), asks_every_time='Every edit waits for your approval (the "edits.review" setting is "ask").',
        diff=_cap(diff, MAX_DIFF_CHARS),
    )
    answer = await unless_aborted(
        ctx, env.editor.ask_permission(request),
        f"The turn was cancelled while the user was looking at the edit to {shown}; nothing was changed.",
    )
    if answer == "deny":
        raise ToolError(
            f"The user rejected this edit to {shown}; nothing was changed. Do not make it again unless asked; "
            "ask the user what they want instead.\n" + _cap(diff, MAX_DIFF_CHARS),
            "PERMISSION_DENIED",
            meta={"path": shown, "diff": diff},
        )


def conflict_error(env: ToolEnv, before: FileText, reason: str | None) -> ToolError:
    shown = env.show(before.path)
    try:
        fresh = read_text(env, before.path, shown)
    except ToolError as e:
        return ToolError(
            f"The edit to {shown} was not applied ({reason or 'the editor refused it'}) and the file "
            f"cannot be read now: {e.message}",
            "EDIT_REJECTED",
        )
    changed = fresh.text != before.text or fresh.version != before.version
    why = reason or "the editor refused it"
    head = (
        f"The edit to {shown} was not applied ({why}). "
        + ("The file changed meanwhile (the user may be typing). " if changed else "")
        + "Its current text is below; make your edit against it.\n"
    )
    return ToolError(
        head + _cap(numbered(fresh.text), MAX_FRESH_TEXT_CHARS),
        "EDIT_REJECTED",
        meta={"path": shown, "version": fresh.version},
    )


def numbered(text: str) -> str:
    lines = split_lines(text)
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}}\t{line}" for i, line in enumerate(lines, 1))


def _count_diff(diff: str) -> tuple[int, int]:
    removed = added = 0
    for line in diff.splitlines()[2:]:  # after the ---/+++ header
        if line.startswith("-"):
            removed += 1
        elif line.startswith("+"):
            added += 1
    return removed, added


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-limit // 3 :]
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters not shown …]\n{tail}"
