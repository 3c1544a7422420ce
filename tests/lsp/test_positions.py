"""Code-point positions -> the negotiated position encoding, for edits sent to the editor."""

from agent_lsp.agent.ports import TextEdit
from agent_lsp.lsp.editor import wire_text_edits

LINE = "a\u00e9\U0001F600b"  # a, é (2 UTF-8 bytes), 😀 (4 bytes, 2 UTF-16 units), b


def _columns(text: str, line: int, encoding: str) -> list[int]:
    edits = tuple(TextEdit((line, i), (line, i), "") for i in range(5))
    return [e.range.start.character for e in wire_text_edits(text, edits, encoding)]


def test_utf16_utf8_and_utf32_columns():
    text = f"first\r\n{LINE}\rlast"
    assert _columns(text, 1, "utf-16") == [0, 1, 2, 4, 5]
    assert _columns(text, 1, "utf-8") == [0, 1, 3, 7, 8]
    assert _columns(text, 1, "utf-32") == [0, 1, 2, 3, 4]


def test_positions_past_the_text_keep_their_line():
    (edit,) = wire_text_edits("x = 1\n", (TextEdit((1, 0), (1, 0), "y = 2\n"),), "utf-16")
    assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (1, 0, "y = 2\n")
