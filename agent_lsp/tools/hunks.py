"""Line hunks of a change made of known spans, and unified diffs built from them.

An edit_file call knows exactly which character spans it replaced, so its
line hunks and its unified diff come straight from the spans (linear in the
file size) instead of a generic line diff, which is slow on big files. The
edit journal uses the same hunks to undo the change.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass

from agent_lsp.tools.text import line_starts, split_keepends

CONTEXT = 3
GENERIC_DIFF_MAX_LINES = 20_000  # above this, a rewrite is shown as one hunk


@dataclass(frozen=True)
class Hunk:
    """Lines [b1, b2) of the old text became lines [a1, a2) of the new one."""

    b1: int
    b2: int
    a1: int
    a2: int


def hunks_from_spans(before: str, spans: list[tuple[int, int, str]]) -> list[Hunk]:
    """Line hunks of replacing sorted, non-overlapping (start, end, new) spans of `before`.

    Each hunk covers the whole old lines its spans touch; spans sharing a line
    share a hunk."""
    n = len(split_keepends(before))
    bounds = line_starts(before)[:n] + [len(before)]  # line i is before[bounds[i]:bounds[i+1]]
    open_end = n > 0 and not before.endswith(("\n", "\r"))

    def line_of(offset: int) -> int:
        if offset == len(before) and open_end:
            return n - 1
        return min(bisect.bisect_right(bounds, offset) - 1, n)

    groups: list[list] = []  # [b1, b2, spans]
    for start, end, new in spans:
        b1 = line_of(start)
        last = line_of(end)
        b2 = last if end > start and end == bounds[last] else min(last + 1, n)
        b2 = max(b1, b2)
        if groups and b1 < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], b2)
            groups[-1][2].append((start, end, new))
        else:
            groups.append([b1, b2, [(start, end, new)]])

    hunks: list[Hunk] = []
    delta = 0
    k = 0
    while k < len(groups):
        b1, b2, group = groups[k]
        k += 1
        while True:
            chunk = _apply(before, bounds[b1], bounds[b2], group)
            next_touches = k < len(groups) and groups[k][0] == b2
            # a chunk ending in "\r" runs on when a "\n" may follow: the old text's or the next group's
            runs_on = (chunk != "" and not chunk.endswith(("\n", "\r"))) or (
                chunk.endswith("\r") and ((b2 < n and before.startswith("\n", bounds[b2])) or next_touches)
            )
            # a chunk that no longer ends its last line runs into what follows: take that in
            if runs_on and k < len(groups) and groups[k][0] == b2:
                b2 = max(b2, groups[k][1])
                group = group + groups[k][2]
                k += 1
            elif runs_on and b2 < n:
                b2 += 1
            else:
                break
        count = len(split_keepends(chunk))
        hunks.append(Hunk(b1, b2, b1 + delta, b1 + delta + count))
        delta += count - (b2 - b1)
    return hunks


def _apply(text: str, lo: int, hi: int, spans: list[tuple[int, int, str]]) -> str:
    pieces, cursor = [], lo
    for start, end, new in spans:
        pieces.append(text[cursor:start])
        pieces.append(new)
        cursor = end
    pieces.append(text[cursor:hi])
    return "".join(pieces)


def hunks_by_diff(before_lines: list[str], after_lines: list[str]) -> list[Hunk]:
    """Generic line diff (for whole rewrites), trimmed to the changed middle first."""
    prefix = 0
    limit = min(len(before_lines), len(after_lines))
    while prefix < limit and before_lines[prefix] == after_lines[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and before_lines[len(before_lines) - 1 - suffix] == after_lines[len(after_lines) - 1 - suffix]
    ):
        suffix += 1
    old_mid = before_lines[prefix : len(before_lines) - suffix]
    new_mid = after_lines[prefix : len(after_lines) - suffix]
    if not old_mid and not new_mid:
        return []
    if len(old_mid) + len(new_mid) > GENERIC_DIFF_MAX_LINES:
        return [Hunk(prefix, prefix + len(old_mid), prefix, prefix + len(new_mid))]
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    return [
        Hunk(prefix + i1, prefix + i2, prefix + j1, prefix + j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def unified_diff(
    before: str, after: str, shown: str, spans: list[tuple[int, int, str]] | None = None
) -> str:
    """A unified diff (3 lines of context) of before -> after, from the spans when known."""
    old, new = split_keepends(before), split_keepends(after)
    hunks = hunks_from_spans(before, spans) if spans is not None else hunks_by_diff(old, new)
    if not hunks:
        return ""
    out = [f"--- a/{shown}\n", f"+++ b/{shown}\n"]
    for group in _grouped(hunks):
        first, last = group[0], group[-1]
        start_b = max(0, first.b1 - CONTEXT)
        end_b = min(len(old), last.b2 + CONTEXT)
        start_a = first.a1 - (first.b1 - start_b)
        end_a = last.a2 + (end_b - last.b2)
        out.append(f"@@ -{_range(start_b, end_b)} +{_range(start_a, end_a)} @@\n")
        cursor = start_b
        for hunk in group:
            out.extend(_marked(" ", old[cursor : hunk.b1]))
            out.extend(_marked("-", old[hunk.b1 : hunk.b2]))
            out.extend(_marked("+", new[hunk.a1 : hunk.a2]))
            cursor = hunk.b2
        out.extend(_marked(" ", old[cursor:end_b]))
    return "".join(out)


def _grouped(hunks: list[Hunk]) -> list[list[Hunk]]:
    groups = [[hunks[0]]]
    for hunk in hunks[1:]:
        if hunk.b1 - groups[-1][-1].b2 <= 2 * CONTEXT:
            groups[-1].append(hunk)
        else:
            groups.append([hunk])
    return groups


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _marked(mark: str, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith(("\n", "\r")):
            out.append(mark + line if line.endswith("\n") else mark + line + "\n")
        else:
            out.append(mark + line + "\n\\ No newline at end of file\n")
    return out
