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

A file name is different: a line break in it would let a name forge a line of
a tool result the model reads, or of a listing a person reads. `visible_name`
shows a name holding a line break, a control character or a bidi override
quoted and escaped as git does (`"a\nb.txt"`), and `name_from_shown` reads
such a quoted name back (a model may pass it on as a path).

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


# what a shown name may not hold raw: every control (newline and tab too), line and paragraph separators, bidi
_UNSHOWABLE_IN_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAME_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\"": '\\"', "\\": "\\\\"}
_QUOTED_ESCAPE = re.compile(r'\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[ntr"\\])')


def visible_name(name: str) -> str:
    """A file name or path as shown: as it is, or, when it holds a line break, a
    control character or a bidi override, in double quotes with those (and `"`
    and `\\`) escaped: `"evil\\nname.txt"`. Always one line, never an escape sequence."""
    if not _UNSHOWABLE_IN_NAME.search(name):
        return name
    return '"' + re.sub(r'[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"\\]', _escape_in_name, name) + '"'


def _escape_in_name(match: re.Match[str]) -> str:
    char = match[0]
    if char in _NAME_ESCAPES:
        return _NAME_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def name_from_shown(text: str) -> str | None:
    """The name `visible_name` showed quoted as `text`, or None when `text` is not such a quoted name."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return None
    body = text[1:-1]
    if _UNSHOWABLE_IN_NAME.search(body) or not _QUOTED_ESCAPE.search(body):
        return None  # not one of ours: we quote only names with something escaped

    def unescape(match: re.Match[str]) -> str:
        code = match[1]
        if code[0] in "xu":
            return chr(int(code[1:], 16))
        return {"n": "\n", "t": "\t", "r": "\r"}.get(code, code)

    rest = _QUOTED_ESCAPE.sub("", body)
    if '"' in rest or "\\" in rest:
        return None  # a quote or backslash not escaped: not a name we showed
    return _QUOTED_ESCAPE.sub(unescape, body)
