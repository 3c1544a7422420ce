"""Which user hooks a workspace has: the `hooks` key, in Claude Code's shape.

    {"hooks": {"PreToolUse": [{"matcher": "run_command|Bash",
                               "hooks": [{"type": "command", "command": "./check.sh", "timeout": 10}]}]}}

(in TOML: `[[hooks.PreToolUse]]` tables with `matcher` and `hooks = [{type, command, timeout}]`).
Events: PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart. The
matcher is a regular expression over tool names, matched in full (`""` or
`"*"` or no matcher: every tool); it matters for the tool events only.
`timeout` is in seconds (default 60).

Sources, all of which apply (hooks add up, none replaces another):

- `hooks` in the settings (the user config file, initializationOptions,
  workspace/configuration): the user's, they run as configured;
- `hooks` in the project's settings files (agent_lsp.workspace.project_settings):
  marked `project`, they run only once the user trusts them.

A bad entry becomes a problem line naming where it is; the others still apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping

from agent_lsp.workspace.project_settings import ProjectFile

HookEvent = Literal["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"]
EVENTS: tuple[HookEvent, ...] = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 3600.0

# Claude Code's names of the built-in tools ours correspond to, so its matchers work unchanged.
CLAUDE_TOOL_NAMES = {
    "run_command": "Bash",
    "read_file": "Read",
    "edit_file": "Edit",
    "write_file": "Write",
    "create_file": "Write",
    "grep": "Grep",
    "glob": "Glob",
    "list_dir": "LS",
}


@dataclass(frozen=True)
class HookCommand:
    event: HookEvent
    matcher: str  # "" matches every tool
    command: str
    timeout_s: float
    source: Literal["user", "project"]
    origin: str  # "settings" or the project file it came from

    def matches(self, tool_name: str | None) -> bool:
        if self.event not in TOOL_EVENTS or self.matcher in ("", "*"):
            return True
        if tool_name is None:
            return False
        names = (tool_name, CLAUDE_TOOL_NAMES.get(tool_name, tool_name))
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return False  # reported when parsed
        return any(pattern.fullmatch(name) for name in names)

    @property
    def is_project(self) -> bool:
        return self.source == "project"


def parse_hooks(raw: Any, source: Literal["user", "project"], origin: str) -> tuple[list[HookCommand], list[str]]:
    """The commands of one `hooks` object, and a line per bad entry."""
    commands: list[HookCommand] = []
    problems: list[str] = []
    if raw is None:
        return commands, problems
    if not isinstance(raw, Mapping):
        return commands, [f"{origin}: \"hooks\" must be an object of event names, got {type(raw).__name__}"]
    for event, groups in raw.items():
        where = f"{origin}: hooks.{event}"
        if event not in EVENTS:
            problems.append(f"{where}: unknown event (expected one of {', '.join(EVENTS)}); ignored")
            continue
        if not isinstance(groups, list):
            problems.append(f"{where}: must be a list of {{matcher, hooks}} objects")
            continue
        for index, group in enumerate(groups):
            here = f"{where}[{index}]"
            if not isinstance(group, Mapping):
                problems.append(f"{here}: must be an object with \"hooks\"")
                continue
            matcher = group.get("matcher") or ""
            if not isinstance(matcher, str):
                problems.append(f"{here}.matcher: must be a string")
                continue
            try:
                re.compile(matcher if matcher != "*" else "")
            except re.error as error:
                problems.append(f"{here}.matcher: not a regular expression ({error})")
                continue
            entries = group.get("hooks")
            if not isinstance(entries, list):
                problems.append(f"{here}.hooks: must be a list of {{type: \"command\", command}} objects")
                continue
            for position, entry in enumerate(entries):
                parsed = _parse_command(entry, f"{here}.hooks[{position}]")
                if isinstance(parsed, str):
                    problems.append(parsed)
                else:
                    command, timeout = parsed
                    commands.append(HookCommand(event, matcher, command, timeout, source, origin))
    return commands, problems


def _parse_command(entry: Any, where: str) -> tuple[str, float] | str:
    if not isinstance(entry, Mapping):
        return f"{where}: must be an object with \"command\""
    kind = entry.get("type", "command")
    if kind != "command":
        return f"{where}.type: only \"command\" hooks are supported (got {kind!r}); ignored"
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return f"{where}.command: must be a non-empty string"
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT_S:
        return f"{where}.timeout: must be a number of seconds in (0, {MAX_TIMEOUT_S:g}]"
    return command, float(timeout)


def workspace_hooks(settings_hooks: Any, project_files: list[ProjectFile]) -> tuple[list[HookCommand], list[str]]:
    """The user's hooks (from the settings), then each project file's."""
    commands, problems = parse_hooks(settings_hooks or None, "user", "settings")
    for file in project_files:
        if "hooks" in file.data:
            more, bad = parse_hooks(file.data["hooks"], "project", file.relative)
            commands += more
            problems += bad
    return commands, problems
