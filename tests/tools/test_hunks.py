"""Line hunks computed from edit spans must describe the edit exactly."""

import difflib

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_lsp.tools.text import replace_spans
from agent_lsp.tools.hunks import hunks_by_diff, hunks_from_spans, unified_diff
from agent_lsp.tools.text import split_keepends

pieces = st.lists(st.sampled_from(["a", "b", "\n", "\r\n", "xy"]), max_size=12).map("".join)


@st.composite
def text_and_spans(draw):
    text = draw(pieces)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    if len(cuts) % 2:
        cuts.append(len(text))
    spans = []
    for start, end in zip(cuts[::2], cuts[1::2]):
        if spans and start < spans[-1][1]:
            continue
        if spans and start == end == spans[-1][0] == spans[-1][1]:
            continue
        spans.append((start, end, draw(pieces)))
    return text, spans


def replay(before_lines, after_lines, hunks):
    out, cursor = [], 0
    for h in hunks:
        assert h.b1 >= cursor and h.b2 >= h.b1
        out.extend(before_lines[cursor : h.b1])
        out.extend(after_lines[h.a1 : h.a2])
        cursor = h.b2
    return out + before_lines[cursor:]


@settings(max_examples=200, deadline=None)
@given(text_and_spans())
@example(("\r\n", [(0, 0, ""), (1, 2, ""), (2, 2, "\n")]))  # a "\r" left by one span, its "\n" added by the next
def test_hunks_from_spans_rebuild_the_new_text(case):
    before, spans = case
    after = replace_spans(before, spans)
    old, new = split_keepends(before), split_keepends(after)
    hunks = hunks_from_spans(before, spans)
    assert "".join(replay(old, new, hunks)) == after
    # line offsets agree: the unchanged lines between hunks line up
    for h in hunks:
        assert 0 <= h.a1 <= h.a2 <= len(new)


@settings(max_examples=200, deadline=None)
@given(pieces, pieces)
def test_generic_hunks_rebuild_the_new_text(before, after):
    old, new = split_keepends(before), split_keepends(after)
    assert "".join(replay(old, new, hunks_by_diff(old, new))) == after


def test_unified_diff_from_spans_matches_difflib():
    before = "".join(f"line {i}\n" for i in range(1, 30))
    spans = [(before.index("line 5"), before.index("line 5") + 6, "LINE 5"),
             (before.index("line 20"), before.index("line 21"), "")]  # fmt: skip
    after = replace_spans(before, spans)
    ours = unified_diff(before, after, "f.txt", spans)
    theirs = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/f.txt", "b/f.txt"))
    assert ours == theirs
    assert unified_diff(before, after, "f.txt") == theirs
