"""The system prompt: who the agent is, how to use its tools, the project's own
instructions (AGENTS.md, CLAUDE.md) and where it runs.

Project instructions are read from every folder from the filesystem root down
to each workspace root, outermost first, so the most specific file comes last
and wins where they disagree.
"""

from __future__ import annotations

import datetime as _dt
import platform
from pathlib import Path
from typing import Sequence

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 32_000

IDENTITY = """\
You are a coding agent working inside the user's editor through agent_lsp. You read and change the \
files of the workspace with your tools; the editor shows your edits in its buffers, where the user \
can see and undo them. Be precise and brief: do the task, then say in a few sentences what you \
changed and what is left."""

TOOL_GUIDE = """\
How to work:
- Paths are relative to the workspace root. You cannot reach files outside the workspace roots.
- Look before you change: use grep, glob and list_dir to find code, read_file to read it. Open files \
are read as the user sees them, unsaved changes included.
- Change files with edit_file (exact oldText -> newText; give enough context for a unique match). \
Use write_file only for new files or full rewrites, create_file/delete_file/rename_file for files.
- If an edit is refused because the file changed, the user is editing it too: use the fresh text \
the error gives you and edit again; never overwrite the user's work.
- run_command runs a shell command in the workspace (tests, builds, git). Your edits are saved \
before it runs. Some commands need the user's permission; if permission is denied, do not try \
to get around it.
- Independent reads can be issued together in one step; they run in parallel."""


def find_instruction_files(root: Path) -> list[Path]:
    """AGENTS.md/CLAUDE.md in `root` and its parent folders, outermost first."""
    root = root.resolve()
    folders = list(reversed([root, *root.parents]))
    found = []
    for folder in folders:
        for name in INSTRUCTION_FILES:
            path = folder / name
            if path.is_file():
                found.append(path)
    return found


def _read_capped(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) > MAX_INSTRUCTION_CHARS:
        text = text[:MAX_INSTRUCTION_CHARS] + f"\n[… cut at {MAX_INSTRUCTION_CHARS} characters]"
    return text.strip()


def build_system_prompt(
    roots: Sequence[Path],
    open_files: Sequence[Path] = (),
    active_file: Path | None = None,
    now: _dt.datetime | None = None,
) -> str:
    now = now or _dt.datetime.now().astimezone()
    sections = [IDENTITY, TOOL_GUIDE]

    seen: set[Path] = set()
    for root in roots:
        for path in find_instruction_files(Path(root)):
            if path in seen:
                continue
            seen.add(path)
            text = _read_capped(path)
            if text:
                sections.append(f"Project instructions from {path}:\n<instructions>\n{text}\n</instructions>")

    env = [
        "Environment:",
        f"- Operating system: {platform.system()} {platform.release()}",
        "- Workspace roots: " + ", ".join(str(r) for r in roots),
        f"- Date: {now.date().isoformat()}",
    ]
    if open_files:
        env.append("- Files open in the editor: " + ", ".join(_show(p, roots) for p in open_files))
    if active_file is not None:
        env.append(f"- Active file (the one the user is looking at): {_show(active_file, roots)}")
    sections.append("\n".join(env))
    return "\n\n".join(sections)


def _show(path: Path, roots: Sequence[Path]) -> str:
    path = Path(path)
    if roots and path.is_relative_to(roots[0]):
        return path.relative_to(roots[0]).as_posix()
    return str(path)
