"""Skills: folders of instructions (a `SKILL.md` and its files) the model loads when it needs them.

    .agents/skills/release/SKILL.md
        ---
        name: release
        description: How to cut a release of this project (version bump, changelog, tag)
        ---
        1. Run `scripts/bump.sh` ...
    .agents/skills/release/checklist.md      (a file the instructions refer to)

Folders, a later one winning for the same name: the user's
(`<config dir>/agent-lsp/skills/`, `~/.claude/skills/`), then the project's
(`.claude/skills/`, `.agents/skills/`). The caller (the workspace host) names
the folders; this module reads them.

The model sees every skill's name and description in the description of the
`skill` tool (tool specs are the stable part of the prompt), and calls it to
load one's full text, the list of its files, or one of those files. A skill
file is read only inside its own folder (a path that leaves it, also through
a symbolic link, is refused), which is the one place outside the workspace
roots the model can read: the user's skills folder holds what the user put
there for the agent.

The front matter read here is the `key: value` lines of `name` and
`description` (the keys skills use); other keys are ignored.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal

from pydantic import Field

from agent_lsp.agent.ports import ToolContext, ToolOutput
from agent_lsp.tools.base import ToolError, ToolInput, error_output
from agent_lsp.tools.front_matter import Fields, field_text, split_front_matter
from agent_lsp.visible import name_from_shown, visible_name

SKILL_FILE = "SKILL.md"
PROJECT_FOLDERS = (".claude/skills", ".agents/skills")  # lowest precedence first
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_SKILL_BYTES = 256_000
MAX_LISTED_FILES = 200

Source = Literal["user", "project"]


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    source: Source

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE

    def text(self) -> str:
        """The SKILL.md body (front matter removed)."""
        return _front_matter(self.path)[1].strip()

    def files(self) -> list[str]:
        """The skill's other files, relative to its folder."""
        found = []
        for path in sorted(self.folder.rglob("*")):
            if path.is_file() and path != self.path:
                found.append(visible_name(path.relative_to(self.folder).as_posix()))  # one line, read back by `read`
            if len(found) >= MAX_LISTED_FILES:
                break
        return found

    def read(self, relative: str) -> str:
        folder = self.folder.resolve()
        named = name_from_shown(relative)  # a name `files` showed quoted
        if named is not None and not os.path.lexists(folder / relative):
            relative = named
        target = (folder / relative).resolve()
        if not target.is_relative_to(folder):
            raise ToolError(f"'{relative}' is outside the folder of skill '{self.name}'", "OUTSIDE_SKILL")
        if not target.is_file():
            raise ToolError(f"skill '{self.name}' has no file '{relative}'", "NOT_FOUND")
        return _read(target)


def skill_folders(root: Path, config_dir: Path, home: Path) -> list[tuple[Path, Source]]:
    """Where skills are read from, lowest precedence first."""
    return [(config_dir / "skills", "user"), (home / ".claude" / "skills", "user"),
            *((root / folder, "project") for folder in PROJECT_FOLDERS)]


def load_skills(folders: Iterable[tuple[Path, Source]]) -> tuple[dict[str, Skill], list[str]]:
    """The skills in `folders` (a later folder wins for a name) and a line per unusable one."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for folder, source in folders:
        try:
            candidates = sorted(p for p in folder.iterdir() if (p / SKILL_FILE).is_file()) if folder.is_dir() else []
        except OSError:
            continue
        for candidate in candidates:
            try:
                fields = _front_matter(candidate / SKILL_FILE)[0] or {}
            except ToolError as error:
                problems.append(f"skill {candidate / SKILL_FILE}: {error.message}")
                continue
            name = field_text(fields.get("name")) or candidate.name
            description = field_text(fields.get("description"))
            if not NAME_PATTERN.match(name):
                problems.append(f"skill {candidate / SKILL_FILE}: name {name!r} must be letters, digits, '-', '_' or '.'")
            elif not description:
                problems.append(f"skill {candidate / SKILL_FILE}: the front matter has no description")
            else:
                skills[name] = Skill(name, description, candidate, source)
    return skills, problems


def _front_matter(path: Path) -> tuple[Fields | None, str]:
    try:
        return split_front_matter(_read(path))
    except ValueError as error:
        raise ToolError(str(error), "BAD_SKILL") from None


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_SKILL_BYTES:
            raise ToolError(f"'{path.name}' is larger than {MAX_SKILL_BYTES} bytes", "TOO_LARGE")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"'{path.name}' is not UTF-8 text", "BINARY_FILE") from None
    except OSError as error:
        raise ToolError(f"cannot read '{path.name}': {error.strerror or error}", "READ_FAILED") from None


def invocation_text(skill: Skill, arguments: str | None = None) -> str:
    """The message a user's invocation of a skill enters: its instructions, then what the user added."""
    text = f'The user invoked the skill "{skill.name}". Follow its instructions.\n\n<skill name="{skill.name}">\n{skill.text()}\n</skill>'
    if skill.files():
        text += f"\n(Its files, read with the skill tool: {', '.join(skill.files())})"
    if arguments and arguments.strip():
        text += f"\n\n{arguments.strip()}"
    return text


class SkillInput(ToolInput):
    name: str = Field(description="The skill's name, from the list in this tool's description.")
    file: str | None = Field(default=None, description="A file of the skill (relative to its folder) to read instead of its instructions.")


class SkillTool:
    """The `skill` tool (implements the Tool port; reads only the skills' folders)."""

    name = "skill"
    input_model = SkillInput

    def __init__(self, skills: dict[str, Skill]):
        self.skills = dict(skills)
        listing = "\n".join(f"- {s.name}: {s.description}" for s in self.skills.values())
        self.description = (
            "Load a skill: instructions the user or the project wrote for a kind of task. When a task matches "
            "a skill's description, load the skill first and follow it. Without `file` it returns the "
            "instructions and the list of the skill's files; with `file`, that file.\n"
            f"Available skills:\n{listing}"
        )

    def is_parallel(self, args: SkillInput) -> bool:
        return True

    async def run(self, args: SkillInput, ctx: ToolContext) -> ToolOutput:
        skill = self.skills.get(args.name)
        if skill is None:
            known = ", ".join(self.skills) or "none"
            return error_output(f"no skill named '{args.name}' (skills: {known})", "UNKNOWN_SKILL")
        try:
            if args.file:
                return ToolOutput(content=skill.read(args.file), meta={"skill": skill.name, "file": args.file})
            files = skill.files()
            text = f'<skill name="{skill.name}">\n{skill.text()}\n</skill>'
            if files:
                text += "\nFiles of this skill (read one with `file`):\n" + "\n".join(f"- {f}" for f in files)
            return ToolOutput(content=text, meta={"skill": skill.name, "files": files})
        except ToolError as error:
            return error_output(error.message, error.code, error.meta)
