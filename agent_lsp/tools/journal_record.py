"""A FileChange (one change a tool applied) and its durable form: what turn revert
needs, kept in the session log.

Every file tool puts the records of the changes it applied in its result's
`meta["journal"]`; the agent writes that into the durable `tool/result`
event. So the session log is the source of truth for revert: a server that
restarts rebuilds its edit journal from the session's events
(`EditJournal.rebuild`).

A text change is stored as line hunks with up to 3 lines of context, not as
the whole file before and after (a 1-line edit of a big file stays small):

    {"op": "edit", "path", "afterSha": sha256 of the text after,
     "hunks": [[afterLine, oldText, newText, contextBefore, contextAfter], ...]}
    {"op": "create", "path", "afterSha"}
    {"op": "delete", "path", "before": text | null (too big to keep)}
    {"op": "rename", "path", "newPath"}

Paths are absolute.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_lsp.tools.hunks import hunks_by_diff, hunks_from_spans
from agent_lsp.tools.text import split_keepends

CONTEXT_LINES = 3
MAX_DELETED_CHARS = 1_000_000  # a bigger deleted file is not kept: its delete cannot be reverted after a restart


@dataclass(frozen=True)
class PatchHunk:
    """Lines of the text after the change, starting at `at`: `new` (the changed
    lines) between `pre` and `post` (unchanged context); `old` is what they were."""

    at: int
    old: str
    new: str
    pre: str
    post: str


@dataclass(frozen=True)
class FileChange:
    """One change a tool applied, enough to undo it.

    before None: the file was created; after None: it was deleted;
    new_path set: it was renamed (before/after then None). `spans`, when
    known, are the (start, end, new text) replacements in `before` that made
    `after` (edit_file knows them; a whole rewrite does not)."""

    path: Path
    before: str | None
    after: str | None
    new_path: Path | None = None
    spans: tuple[tuple[int, int, str], ...] | None = None
    # Rebuilt from the session log (`from_record`), without the whole texts:
    after_sha: str | None = None  # digest of the text after the change
    patch: tuple[PatchHunk, ...] | None = None  # the hunks of a text change
    deleted: bool = False  # a delete whose text may be unknown (before None: too big to keep)


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def to_record(change: FileChange) -> dict[str, Any]:
    """The JSON record of a FileChange."""
    path = str(change.path)
    if change.new_path is not None:
        return {"op": "rename", "path": path, "newPath": str(change.new_path)}
    if change.before is None:
        return {"op": "create", "path": path, "afterSha": text_digest(change.after or "")}
    if change.after is None:
        before = change.before if len(change.before) <= MAX_DELETED_CHARS else None
        return {"op": "delete", "path": path, "before": before}
    return {"op": "edit", "path": path, "afterSha": text_digest(change.after), "hunks": _patch(change)}


def _patch(change: FileChange) -> list[list[Any]]:
    before_text, after_text = change.before or "", change.after or ""
    before, after = split_keepends(before_text), split_keepends(after_text)
    if change.spans is not None:
        hunks = hunks_from_spans(before_text, list(change.spans))
    else:
        hunks = hunks_by_diff(before, after)
    out = []
    for h in hunks:
        pre = "".join(after[max(0, h.a1 - CONTEXT_LINES) : h.a1])
        post = "".join(after[h.a2 : h.a2 + CONTEXT_LINES])
        out.append([h.a1, "".join(before[h.b1 : h.b2]), "".join(after[h.a1 : h.a2]), pre, post])
    return out


def from_record(record: dict[str, Any]) -> FileChange:
    """The FileChange of a record; ValueError when it is not one."""
    op, path = record.get("op"), Path(str(record.get("path")))
    if op == "rename":
        return FileChange(path, None, None, new_path=Path(str(record["newPath"])))
    if op == "create":
        return FileChange(path, None, None, after_sha=str(record["afterSha"]))
    if op == "delete":
        return FileChange(path, record.get("before"), None, deleted=True)
    if op == "edit":
        hunks = tuple(PatchHunk(int(a), str(o), str(n), str(p), str(q)) for a, o, n, p, q in record["hunks"])
        return FileChange(path, None, None, after_sha=str(record["afterSha"]), patch=hunks)
    raise ValueError(f"not a journal record: {record!r}")
