"""The project's own settings files, as a cloned repository brings them.

Read in this order (each is optional):

1. `.agents/settings.toml` (our TOML, the user config file's shape);
2. `.agents/settings.json` (the same keys in JSON);
3. `.claude/settings.json` (Claude Code's project file, so existing configs work).

Only some keys of these files apply (`hooks` for now, see docs/capabilities.md):
what a project file may do is decided by the module that reads the key, since
a project file is written by whoever wrote the repository, not by the user.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT_SETTINGS_FILES = (".agents/settings.toml", ".agents/settings.json", ".claude/settings.json")


@dataclass(frozen=True)
class ProjectFile:
    path: Path
    relative: str  # as written above: how the user is told where a value came from
    data: dict[str, Any]


def read_project_settings(root: Path) -> tuple[list[ProjectFile], list[str]]:
    """Every project settings file of `root` that exists, and a line per unreadable one."""
    files: list[ProjectFile] = []
    problems: list[str] = []
    for relative in PROJECT_SETTINGS_FILES:
        path = root / relative
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as error:
            problems.append(f"{relative}: cannot be read: {error.strerror or error}")
            continue
        try:
            data = tomllib.loads(raw.decode("utf-8")) if relative.endswith(".toml") else json.loads(raw)
        except (ValueError, UnicodeDecodeError) as error:
            problems.append(f"{relative}: not valid {'TOML' if relative.endswith('.toml') else 'JSON'}: {error}; none of it applies")
            continue
        if not isinstance(data, dict):
            problems.append(f"{relative}: must hold an object, got {type(data).__name__}")
            continue
        files.append(ProjectFile(path, relative, data))
    return files, problems
