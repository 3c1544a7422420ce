"""Agent types: named sub-agent definitions read from Markdown files.

A definition is one `<name>.md` with front matter and a body:

    ---
    name: reviewer
    description: Reviews a change for bugs
    tools: read_file, grep, run_command
    model: claude-haiku-4-5
    ---
    You review code. ...            (the body is the sub-agent's system prompt)

Folders, later ones winning for the same name: the user's
(`<config dir>/agent-lsp/agents/`, then `~/.claude/agents/`), then the
project's (`.claude/agents/`, then `.agents/agents/`), so a project refines
what the user defined and `.claude` definitions work as they are.

`tools` is a comma-separated list or a YAML list; missing, the sub-agent gets
the read-only tools. `model` missing or `inherit`: the parent's model. The
front matter is the flat `key: value` subset these files use; we read it
ourselves rather than add a YAML dependency for four keys.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

log = logging.getLogger(__name__)

PROJECT_FOLDERS = (".claude/agents", ".agents/agents")  # lowest first
USER_FOLDERS = ("agents",)  # under the config dir
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_FILE_BYTES = 256_000


@dataclass(frozen=True)
class AgentType:
    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None  # None: the read-only default
    model: str | None  # None: the parent's
    path: Path


def agent_type_folders(root: Path, config_dir: Path, home: Path) -> list[Path]:
    """Where definitions are read from, lowest precedence first."""
    folders = [config_dir / f for f in USER_FOLDERS] + [home / ".claude" / "agents"]
    return folders + [root / f for f in PROJECT_FOLDERS]


def load_agent_types(folders: Iterable[Path]) -> tuple[dict[str, AgentType], list[str]]:
    """The agent types defined in `folders` (a later folder wins) and a
    readable line for each file that could not be used."""
    types: dict[str, AgentType] = {}
    problems: list[str] = []
    for folder in folders:
        try:
            files = sorted(folder.glob("*.md")) if folder.is_dir() else []
        except OSError:
            continue
        for path in files:
            try:
                agent_type = parse_agent_type(path)
            except ValueError as e:
                problems.append(f"agent type {path}: {e}")
                continue
            types[agent_type.name] = agent_type
    return types, problems


def parse_agent_type(path: Path) -> AgentType:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read it ({e})") from None
    fields, body = split_front_matter(text)
    name = _text(fields.get("name")) or path.stem
    if not NAME_PATTERN.match(name):
        raise ValueError(f"name {name!r} must be letters, digits, '-', '_' or '.'")
    description = _text(fields.get("description"))
    if not description:
        raise ValueError("front matter has no description")
    tools = fields.get("tools")
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",")]
    model = _text(fields.get("model"))
    return AgentType(
        name=name,
        description=description,
        system_prompt=body.strip(),
        tools=tuple(t for t in tools if t) if tools is not None else None,
        model=None if model in ("", "inherit") else model,
        path=path,
    )


def split_front_matter(text: str) -> tuple[dict[str, str | list[str]], str]:
    """(fields, body) of a Markdown file that starts with `---` front matter."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter (the file must start with a '---' line)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError("front matter is not closed with a '---' line") from None
    fields: dict[str, str | list[str]] = {}
    key: str | None = None
    for n, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s+-\s*(.*)$", line)
        if item and key is not None:  # a YAML list under the last key
            current = fields.get(key)
            fields[key] = (current if isinstance(current, list) else []) + [_unquote(item.group(1))]
            continue
        pair = re.match(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$", line)
        if not pair:
            raise ValueError(f"line {n}: expected 'key: value'")
        key, value = pair.group(1), pair.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            fields[key] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            fields[key] = _unquote(value)
        else:
            fields[key] = []  # a list follows (or nothing)
    return fields, "\n".join(lines[end + 1:])


def _text(value: str | list[str] | None) -> str:
    return " ".join(value).strip() if isinstance(value, list) else (value or "").strip()


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
