"""The word index that makes many-edit calls fast finds exactly what a plain scan finds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_lsp.tools.edit import OccurrenceFinder, _occurrences

alphabet = st.sampled_from(["a", "b", "ab", " ", "\n", "(", "_", "é", "1"])
texts = st.lists(alphabet, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=texts, old=st.lists(alphabet, min_size=1, max_size=8).map("".join))
def test_indexed_search_equals_scan(text: str, old: str):
    assert OccurrenceFinder(text, indexed=True).occurrences(old) == _occurrences(text, old)


@settings(max_examples=200, deadline=None)
@given(text=texts, data=st.data())
def test_substrings_of_the_text_are_found_like_the_scan(text: str, data):
    if not text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = text[start:end]
    assert OccurrenceFinder(text, indexed=True).occurrences(old) == _occurrences(text, old)


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", "b", "\r\n", "\n", "x"]), min_size=1, max_size=20).map("".join),
    data=st.data(),
)
def test_trimmed_edits_make_the_same_text_and_never_split_a_crlf(text: str, data):
    from agent_lsp.tools.edit import EditSpec, locate_edits
    from agent_lsp.tools.text import replace_spans

    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = text[start:end]
    if "\r\n" in text and "\n" in old and "\r" not in old:
        return  # the model's "\n" is read as the file's "\r\n": another test's business
    new = data.draw(st.lists(st.sampled_from(["a", "b", "\r\n", "x"]), max_size=8).map("".join))
    edit = EditSpec(old_text=old, new_text=new, replace_all=True)
    try:
        spans = locate_edits(text, [edit], "f")
    except Exception:
        return  # e.g. overlapping occurrences: an error, not a wrong edit
    expected = replace_spans(text, [(s, s + len(old), new) for s in _occurrences(text, old)])
    assert replace_spans(text, spans) == expected
    boundaries = {b for s in _occurrences(text, old) for b in (s, s + len(old))}
    for s, e, _ in spans:
        for cut in (s, e):  # trimming moved it: it must not land inside a "\r\n"
            if cut not in boundaries:
                assert not (0 < cut < len(text) and text[cut - 1] == "\r" and text[cut] == "\n")
