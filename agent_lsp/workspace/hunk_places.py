"""Where a change's lines are in the text the user sees now.

The edit journal (turn revert) and the review (pending hunks) both find an
earlier change again in the current text, and leave alone what the user
changed since:

- with the whole text right after the change: `line_map` maps its lines to
  the current ones where unchanged, and `mapped_range` says where a hunk's
  lines are (None when the user edited them);
- with only a hunk and its context (read back from the session log):
  `exact_places` when the text is exactly as the change left it, else
  `find_places` finds each hunk by its lines and context, nearest to where it
  was, as `patch` does.

`current_text` is the text those are looked for in: the open buffer (with its
version), else the file on disk.
"""

from __future__ import annotations

from pathlib import Path

from agent_lsp.agent.ports import Editor
from agent_lsp.tools.hunks import hunks_by_diff
from agent_lsp.tools.journal_record import PatchHunk
from agent_lsp.tools.text import decode, is_binary, split_keepends


def current_text(editor: Editor, path: Path) -> tuple[str, int | None] | None:
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


def line_map(old: list[str], new: list[str]) -> dict[int, int]:
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


def mapped_range(where: dict[int, int], i1: int, i2: int, n_old: int) -> tuple[int, int] | None:
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


def exact_places(hunks: list[PatchHunk]) -> list[tuple[int, int] | None]:
    """The file is exactly as the agent left it: every hunk is where it was."""
    return [(h.at, h.at + len(split_keepends(h.new))) for h in hunks]


def find_places(now: list[str], hunks: list[PatchHunk]) -> list[tuple[int, int] | None]:
    """Where each hunk's new lines are in the current lines, found with their
    context, nearest to where they were (shifted like the hunks before)."""
    index: dict[str, list[int]] = {}
    for i, line in enumerate(now):
        index.setdefault(line, []).append(i)
    places: list[tuple[int, int] | None] = []
    drift = 0
    floor = 0  # hunks do not overlap: each is after the previous one
    for hunk in hunks:
        pre, new, post = split_keepends(hunk.pre), split_keepends(hunk.new), split_keepends(hunk.post)
        block = pre + new + post
        if not block:  # nothing to recognise it by: only an empty file matches
            places.append((0, 0) if not now else None)
            continue
        expected = hunk.at - len(pre) + drift
        candidates = [
            i for i in index.get(block[0], ()) if i + len(pre) >= floor and now[i : i + len(block)] == block
        ]
        if not candidates:
            places.append(None)
            continue
        found = min(candidates, key=lambda i: (abs(i - expected), i))
        drift = found - (hunk.at - len(pre))
        c1 = found + len(pre)
        c2 = c1 + len(new)
        places.append((c1, c2))
        floor = c2
    return places
