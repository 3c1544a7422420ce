"""The system prompt: who the agent is, how to work, where it runs and the
project's own instructions (AGENTS.md, CLAUDE.md); and the runtime context
(the files open in the editor), which is kept out of it.

Project instructions are read from every folder from the filesystem root down
to each workspace root, outermost first, so the most specific file comes last
and wins where they disagree.

The system prompt is the start of every request, so it must stay byte-identical
from step to step for the providers' prompt caches to hit: `SystemPrompt`
rebuilds it only when an instruction file appears, changes (mtime or size),
disappears, or the date changes. It is the same in every folder (who the
agent is, how to work, the machine and the date); the folder's own part (its
roots and project instructions, `SystemPrompt.workspace`) goes in a hidden
first message after the tools (`attach_workspace_prompt`, agent/workspace_part.py),
so a model server shared by several projects reuses the system prompt and the
tool schemas of every one of them. What changes while the user works (which
files are open) goes into `runtime_context`, which the agent loop enters into
the history as a message only when it changed (R4.5 in docs/agent-loop.md).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from agent_lsp.agent import Agent

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 32_000

IDENTITY = """\
You are a coding agent in the user's editor. You read and change the workspace's files with your tools; \
the user sees your edits in the editor and can undo them. Be precise and brief: do the task, then say in \
a few sentences what you changed and what is left."""

GUIDE = """\
How to work:
- Paths are relative to the workspace root; nothing outside the workspace roots can be reached.
- Look before you change: search, then read. Open files read as the user sees them, unsaved changes included.
- An edit refused because the file changed means the user is editing it too: edit again from the fresh \
text the error gives; never overwrite the user's work.
- If the user denies a permission, do not try to get around it.
- Independent reads can go in one step; they run in parallel."""


def instruction_candidates(root: Path) -> list[Path]:
    """Where instruction files may be: each name in `root` and its parent folders, outermost first."""
    root = root.resolve()
    return [folder / name for folder in reversed([root, *root.parents]) for name in INSTRUCTION_FILES]


def find_instruction_files(root: Path) -> list[Path]:
    """AGENTS.md/CLAUDE.md in `root` and its parent folders, outermost first."""
    return [path for path in instruction_candidates(root) if path.is_file()]


def _read_capped(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) > MAX_INSTRUCTION_CHARS:
        text = text[:MAX_INSTRUCTION_CHARS] + f"\n[… cut at {MAX_INSTRUCTION_CHARS} characters]"
    return text.strip()


def build_system_prompt(now: _dt.datetime | None = None) -> str:
    """What is the same in every folder: who the agent is, how to work, the machine
    and the date (a shared model server's prompt cache reuses it across projects)."""
    now = now or _dt.datetime.now().astimezone()
    return "\n\n".join([IDENTITY, GUIDE,
                        f"Operating system: {platform.system()} {platform.release()}. Date: {now.date().isoformat()}."])


def build_workspace_prompt(roots: Sequence[Path]) -> str:
    """The folder's own part of the fixed prompt: its roots and project instructions."""
    sections = ["Workspace roots: " + ", ".join(str(r) for r in roots)]
    seen: set[Path] = set()
    for root in roots:
        for path in find_instruction_files(Path(root)):
            if path in seen:
                continue
            seen.add(path)
            text = _read_capped(path)
            if text:
                sections.append(f"Project instructions from {path}:\n<instructions>\n{text}\n</instructions>")
    return "\n\n".join(sections)


def runtime_context(roots: Sequence[Path], open_files: Sequence[Path] = (), active_file: Path | None = None) -> str | None:
    """What the editor shows right now, as the text of a runtime-context message; None when nothing is open."""
    lines = []
    if open_files:
        lines.append("- Files open in the editor: " + ", ".join(_show(p, roots) for p in open_files))
    if active_file is not None:
        lines.append(f"- Active file (the one the user is looking at): {_show(active_file, roots)}")
    if not lines:
        return None
    return "\n".join(["Editor state (changes as the user works; the latest one holds):", *lines])


class SystemPrompt:
    """The system prompt of a set of roots, built once and rebuilt only when
    an instruction file appears, changes or goes, or the date changes.

    A call stats the candidate paths (a few `stat`s, no reads); the files are
    read again only when one of them shows another mtime or size. Shared by the
    sessions of a workspace, so every session starts with the same bytes.
    """

    def __init__(self, roots: Sequence[Path], *, today: Callable[[], _dt.date] | None = None):
        self.roots = [Path(r) for r in roots]
        self._today = today or (lambda: _dt.datetime.now().astimezone().date())
        self._candidates = [path for root in self.roots for path in instruction_candidates(root)]
        self._signature: tuple | None = None
        self._text = ""
        self._workspace = ""

    def _stat_signature(self) -> tuple:
        signature: list = [self._today()]
        for path in self._candidates:
            try:
                st = os.stat(path)
            except OSError:
                signature.append(None)
            else:
                signature.append((st.st_mtime_ns, st.st_size))
        return tuple(signature)

    def _current(self) -> tuple[str, str]:
        signature = self._stat_signature()
        if signature != self._signature:
            today = signature[0]
            self._text = build_system_prompt(now=_dt.datetime(today.year, today.month, today.day))
            self._workspace = build_workspace_prompt(self.roots)
            self._signature = signature
        return self._text, self._workspace

    def __call__(self) -> str:
        """The system prompt: the same in every folder."""
        return self._current()[0]

    def workspace(self) -> str:
        """The folder's part: its roots and project instructions."""
        return self._current()[1]

    def whole(self) -> str:
        """Both, as the model reads them."""
        return "\n\n".join(self._current())


def attach_workspace_prompt(agent: Agent, text: Callable[[], str]) -> None:
    """Send `text()` (the folder's part of the fixed prompt) as the hidden first
    message of each of `agent`'s requests, after the system prompt and the tools."""

    async def assemble(payload: dict[str, Any], next_: Callable) -> Any:
        result = await next_(payload)
        return {**result, "workspace": text()} if isinstance(result, dict) else result

    agent.hooks.register("system-prompt/assemble", assemble)


def _show(path: Path, roots: Sequence[Path]) -> str:
    path = Path(path)
    if roots and path.is_relative_to(roots[0]):
        return path.relative_to(roots[0]).as_posix()
    return str(path)
