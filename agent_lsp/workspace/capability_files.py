"""The files a folder's capabilities are read from, and whether they changed.

The workspace host reads skills, rules, agent types, project hooks and
`.mcp.json` once and keeps them; `CapabilityFiles.changed()` tells it which
of them to read again. It compares a fingerprint of each kind (the
modification time and size of every file that kind is read from, and the
listing of its folders) with the one taken last time: a few `stat` calls, so
it is cheap enough to run at the start of every turn, for clients that do not
send `workspace/didChangeWatchedFiles`, and on every such notification.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from agent_lsp.mcp.config import PROJECT_FILE
from agent_lsp.tools.skills import SKILL_FILE, skill_folders
from agent_lsp.workspace.agent_types import agent_type_folders
from agent_lsp.workspace.project_settings import PROJECT_SETTINGS_FILES
from agent_lsp.workspace.rules import RULE_FOLDERS

Kind = Literal["mcp", "hooks", "skills", "rules", "agents"]
KINDS: tuple[Kind, ...] = ("mcp", "hooks", "skills", "rules", "agents")

Fingerprint = tuple[tuple[str, int, int], ...]  # (path, mtime in ns, size) of each file that exists


class CapabilityFiles:
    def __init__(self, root: Path, config_dir: Path, home: Path):
        self.files: dict[Kind, list[Path]] = {
            "mcp": [root / PROJECT_FILE],
            "hooks": [root / relative for relative in PROJECT_SETTINGS_FILES],
        }
        # skills: the SKILL.md of every sub-folder; rules and agent types: the folder's *.md files
        self.folders: dict[Kind, list[Path]] = {
            "skills": [folder for folder, _ in skill_folders(root, config_dir, home)],
            "rules": [root / folder for folder in RULE_FOLDERS],
            "agents": agent_type_folders(root, config_dir, home),
        }
        self._last = {kind: self.fingerprint(kind) for kind in KINDS}

    def changed(self) -> set[Kind]:
        """The kinds whose files changed since the last call (or since this was made)."""
        changed: set[Kind] = set()
        for kind in KINDS:
            now = self.fingerprint(kind)
            if now != self._last[kind]:
                self._last[kind] = now
                changed.add(kind)
        return changed

    def fingerprint(self, kind: Kind) -> Fingerprint:
        if kind in self.files:
            paths = [str(path) for path in self.files[kind]]
        elif kind == "skills":
            paths = [os.path.join(entry, SKILL_FILE) for folder in self.folders[kind] for entry in _entries(folder)]
        else:
            paths = [entry for folder in self.folders[kind] for entry in _entries(folder) if entry.endswith(".md")]
        return tuple(stat for stat in map(_stat, paths) if stat is not None)


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(entry.path for entry in os.scandir(folder))
    except OSError:  # no such folder (the usual case), or unreadable
        return []


def _stat(path: str) -> tuple[str, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (path, stat.st_mtime_ns, stat.st_size)
