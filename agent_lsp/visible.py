"""Text shown to a person, with the characters that would act instead of show
made visible.

A tool result, an MCP server's description, command output or the model's
text may hold terminal control sequences (ESC `]52;` sets the clipboard,
ESC `[2J` clears the screen, a carriage return overwrites a line), BEL, NUL,
or bidirectional overrides that make text read differently from what it is.
Wherever such text reaches a terminal or a message a person reads, it goes
through `visible`: C0 and C1 controls other than newline and tab become their
Unicode control pictures (`␛]52;…`, `␇`, `␀`, `␍`) or `<U+0085>`, and the
bidi embeddings, overrides and isolates become `<U+202E>`. The model and the
session log keep the raw text: there it is data.

A leaf: it imports nothing of ours.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, bidi embeddings/overrides (U+202A-U+202E) and isolates (U+2066-U+2069)
_ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _picture(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"


def _ascii(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"<U+{code:04X}>"


def visible(text: str, *, ascii_only: bool = False) -> str:
    """`text` with every control character but newline and tab, and every bidi
    override, replaced by a visible stand-in; `ascii_only` for a stream that
    cannot encode the control pictures (`\\x1b]52;…`)."""
    if not _ACTIVE.search(text):
        return text
    return _ACTIVE.sub(lambda match: (_ascii if ascii_only else _picture)(match[0]), text)
