"""The `---` front matter of Markdown files (skills, agent types, rules).

These files use flat `key: value` lines, `key: [a, b]` and `- item` lists
under a key, and nothing else of YAML, so a small reader is enough and
agent_lsp needs no YAML library. Lines it cannot read (a folded YAML string's
continuation, say) are skipped rather than failing the whole file.
"""

from __future__ import annotations

import re

Fields = dict[str, "str | list[str]"]

_PAIR = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$")
_ITEM = re.compile(r"^\s+-\s*(.*)$")


def split_front_matter(text: str) -> tuple[Fields | None, str]:
    """(the fields, the body); no front matter: (None, text). ValueError if it is not closed."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise ValueError("the front matter is not closed with a '---' line")
    fields: Fields = {}
    key: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item and key is not None:  # a list under the last key
            current = fields.get(key)
            fields[key] = (current if isinstance(current, list) else []) + [_unquote(item.group(1))]
            continue
        pair = _PAIR.match(line)
        if not pair:
            continue
        key, value = pair.group(1), pair.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            fields[key] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            fields[key] = _unquote(value) if value else []  # empty: a list follows (or nothing)
    return fields, "\n".join(lines[end + 1:])


def field_text(value: str | list[str] | None) -> str:
    """A field as one line of text (a list's items joined by spaces)."""
    return " ".join(value).strip() if isinstance(value, list) else (value or "").strip()


def field_list(value: str | list[str] | None) -> tuple[str, ...]:
    """A field as a list: a YAML list, or a comma-separated string."""
    items = value if isinstance(value, list) else (value or "").split(",")
    return tuple(item.strip().strip("'\"") for item in items if item.strip().strip("'\""))


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
