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

from agent_lsp.tools.front_matter import field_list, field_text, split_front_matter

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
    try:
        fields, body = split_front_matter(text)
    except ValueError as e:
        raise ValueError(str(e).removeprefix("the ")) from None
    if fields is None:
        raise ValueError("no front matter (the file must start with a '---' line)")
    name = field_text(fields.get("name")) or path.stem
    if not NAME_PATTERN.match(name):
        raise ValueError(f"name {name!r} must be letters, digits, '-', '_' or '.'")
    description = field_text(fields.get("description"))
    if not description:
        raise ValueError("front matter has no description")
    tools = field_list(fields["tools"]) if "tools" in fields else None
    model = field_text(fields.get("model"))
    return AgentType(
        name=name,
        description=description,
        system_prompt=body.strip(),
        tools=tools,
        model=None if model in ("", "inherit") else model,
        path=path,
    )
