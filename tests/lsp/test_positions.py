"""Code-point columns -> the negotiated position encoding."""

from agent_lsp.lsp.editor import to_encoded_column

LINE = "a\u00e9\U0001F600b"  # a, é (2 UTF-8 bytes), 😀 (4 bytes, 2 UTF-16 units), b


def test_utf16_utf8_and_utf32_columns():
    assert [to_encoded_column(LINE, i, "utf-16") for i in range(5)] == [0, 1, 2, 4, 5]
    assert [to_encoded_column(LINE, i, "utf-8") for i in range(5)] == [0, 1, 3, 7, 8]
    assert [to_encoded_column(LINE, i, "utf-32") for i in range(5)] == [0, 1, 2, 3, 4]
