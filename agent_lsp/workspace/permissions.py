"""PermissionPolicy: allow / ask / deny per tool call, with rules and remembered grants.

Decision order for one call (first that applies wins):
1. a deny rule matches                       -> deny
2. the command is on the always-ask list,    -> ask ("session"/"always" answers count as "once")
   or the tool says it asks every time (a command run outside the sandbox on purpose)
3. an ask rule matches                       -> ask (same: the rule pins it to asking)
4. an allow rule or a grant matches          -> allow
5. a command that runs sandboxed with no     -> allow, unless `permissions.sandboxedCommands` is "ask"
   network, where the default would ask         or the default for commands is "deny"
6. the default for the tool, else its kind   -> by default commands ask; reads and writes are allowed

A question the policy would ask again whatever the answer (2. and 3.) offers
only "once" and "deny", and says why it is asked every time.

Rules come from the settings (constructor), from "always" answers (persisted
in a JSON file per workspace, re-read when another process changed it, so
every editor on the workspace shares them) and from "session" answers (in
memory, per session). A rule names a tool ("*" for any) and optionally a
command prefix (whole words; it never covers a command chained after it
with ;, &&, |, …) or a path glob (workspace-relative). A tool name ending in
"*" is a prefix: `mcp__git__*` names every tool of the MCP server "git".

Every rule can be listed with where it comes from (`listed_rules`), and the
remembered ones ("session" and "always" answers) revoked (`revoke`); rules of
the settings or the managed policy are changed where they are written.

The question goes to the editor (`Editor.ask_permission`); no answer, a
timeout, an error or an answer we do not know is "deny".

Before all of that, the session's permission mode: in `plan` mode only reads
pass (reading and searching the workspace); a write, delete or command is
refused without asking, whatever the rules say. The mode is per session and
recorded in its log (`agent_lsp.workspace.session_modes`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from agent_lsp.agent.ports import Editor, PermissionRequest
from agent_lsp.tools.base import Verdict
from agent_lsp.tools.search import compile_glob

Action = Literal["allow", "ask", "deny"]

DEFAULT_ACTIONS: Mapping[str, Action] = {"command": "ask", "read": "allow", "write": "allow", "delete": "allow"}

# Commands that always ask, whatever the rules and grants say.
ALWAYS_ASK_PATTERNS: tuple[str, ...] = (
    r"\brm\s+(?:-\S*\s+)*-[a-zA-Z]*[rR]",  # rm -r, rm -rf, rm -fr, rm -f -r
    r"\brm\s+.*--recursive",
    r"\bsudo\b",
    r"\bsu\b",
    r"\bdoas\b",
    r"\bgit\s+push\b",
    r"\bgit\s+reset\s+--hard\b",
    r"\bgit\s+clean\b",
    r"\b(?:curl|wget)\b[^|]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b",
    r"\bmkfs",
    r"\bdd\b.*\bof=",
    r"\bchmod\s+(?:-\S+\s+)*-[a-zA-Z]*R",
    r"\bchown\s+(?:-\S+\s+)*-[a-zA-Z]*R",
    r":\(\)\s*\{",  # fork bomb
    r"\b(?:shutdown|reboot|halt|poweroff)\b",
    r">\s*/dev/(?:sd|nvme|hd)",
)

# What each always-ask pattern is, in words, for the question's reason.
ALWAYS_ASK_LABELS: Mapping[str, str] = dict(zip(ALWAYS_ASK_PATTERNS, (
    "a recursive delete", "a recursive delete", "sudo", "su", "doas", "git push", "git reset --hard",
    "git clean", "a download piped into a shell", "formatting a disk", "dd writing a device",
    "a recursive chmod", "a recursive chown", "a fork bomb", "shutting the machine down", "writing a disk device",
)))


PermissionMode = Literal["default", "plan"]
PERMISSION_MODES: tuple[str, ...] = ("default", "plan")
PLAN_MODE_REFUSAL = (
    "Plan mode is on for this session: you may read and search the workspace, but not edit files or run "
    "commands. Write your plan with todo_write instead; the user leaves plan mode to let you carry it out."
)

_CONTROL = re.compile(r"[;&|`\n<>]|\$\(")
ANSWERS = ("once", "session", "always", "deny")


@dataclass(frozen=True)
class PermissionRule:
    tool: str  # a tool name, "*" for any, or a prefix ending in "*" (`mcp__git__*`: every tool of one MCP server)
    action: Action
    command_prefix: str | None = None
    path_glob: str | None = None

    def matches(self, request: PermissionRequest, relative_path: str | None) -> bool:
        if not tool_matches(self.tool, request.tool):
            return False
        if self.command_prefix is not None:
            if request.command is None or not command_has_prefix(request.command, self.command_prefix):
                return False
        if self.path_glob is not None:
            if relative_path is None:
                return False
            if relative_path != self.path_glob and not compile_glob(self.path_glob).match(relative_path):
                return False
        return True

    def to_json(self) -> dict[str, Any]:
        data = {"tool": self.tool, "action": self.action}
        if self.command_prefix is not None:
            data["commandPrefix"] = self.command_prefix
        if self.path_glob is not None:
            data["pathGlob"] = self.path_glob
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PermissionRule":
        action = data.get("action", "allow")
        if action not in ("allow", "ask", "deny"):
            raise ValueError(f"bad action {action!r}")
        return cls(str(data["tool"]), action, data.get("commandPrefix"), data.get("pathGlob"))


RuleScope = Literal["session", "workspace", "settings", "policy"]


@dataclass(frozen=True)
class ListedRule:
    """A rule in force, with where it comes from: `session` and `workspace`
    (remembered answers) can be revoked; `settings` and `policy` rules are
    changed in the file that holds them."""

    id: str  # stable while the rule exists: its scope, session and content
    rule: PermissionRule
    scope: RuleScope
    source: str  # for the user: the file or the session that holds it
    session_id: str | None = None

    @property
    def revocable(self) -> bool:
        return self.scope in ("session", "workspace")


def _rule_id(scope: str, rule: PermissionRule, session_id: str | None = None) -> str:
    content = json.dumps([scope, session_id, rule.to_json()], sort_keys=True)
    return f"{scope}-{hashlib.sha1(content.encode()).hexdigest()[:12]}"


def tool_matches(pattern: str, tool: str) -> bool:
    return pattern in ("*", tool) or (pattern.endswith("*") and tool.startswith(pattern[:-1]))


def command_has_prefix(command: str, prefix: str) -> bool:
    """`prefix` as whole words at the start of `command`, with nothing chained after it."""
    command = " ".join(command.split())
    prefix = " ".join(prefix.rstrip("*").rstrip(":").split())
    if not prefix:
        return False
    if command != prefix and not command.startswith(prefix + " "):
        return False
    return not _CONTROL.search(command[len(prefix) :])


def is_always_ask(command: str, patterns: Sequence[str] = ALWAYS_ASK_PATTERNS) -> bool:
    return always_ask_match(command, patterns) is not None


def always_ask_match(command: str, patterns: Sequence[str] = ALWAYS_ASK_PATTERNS) -> str | None:
    """The first always-ask pattern the command matches."""
    return next((p for p in patterns if re.search(p, command)), None)


class PermissionPolicy:
    def __init__(
        self,
        store_path: Path | None = None,
        *,
        roots: Sequence[Path] = (),
        rules: Sequence[PermissionRule] = (),
        rule_sources: Sequence[tuple[RuleScope, str]] = (),
        defaults: Mapping[str, Action] | None = None,
        always_ask: Sequence[str] = ALWAYS_ASK_PATTERNS,
        ask_timeout_s: float = 300.0,
        sandboxed_commands: Literal["allow", "ask"] = "allow",
    ):
        self.store_path = store_path
        self.roots = [Path(os.path.abspath(r)) for r in roots]
        self.rules = list(rules)
        # (scope, source) of each of `rules`, for the listing; missing ones: the settings
        self.rule_sources = list(rule_sources) + [("settings", "the permissions.rules setting")] * (len(self.rules) - len(rule_sources))
        self.defaults: dict[str, Action] = {**DEFAULT_ACTIONS, **(defaults or {})}
        self.always_ask = tuple(always_ask)
        self.ask_timeout_s = ask_timeout_s
        self.sandboxed_commands = sandboxed_commands
        self._session_grants: dict[str, list[PermissionRule]] = {}
        self._stored: list[PermissionRule] = []
        self._stored_stamp: tuple[int, int] | None = None
        self.mode_of: Callable[[str | None], str] = lambda session_id: "default"  # the session's permission mode

    # ----------------------------------------------------------- decisions

    def decide(self, request: PermissionRequest) -> Action:
        """What the rules say, without asking anyone."""
        return self._decide(request)[0]

    def _decide(self, request: PermissionRequest) -> tuple[Action, str | None]:
        """(action, why it is pinned): a pinned ask cannot be remembered."""
        relative = self._relative(request.path)
        stored = self.stored_rules()
        grants = self._session_grants.get(request.session_id or "", [])
        every = [*self.rules, *stored, *grants]
        if any(r.action == "deny" and r.matches(request, relative) for r in every):
            return "deny", "a deny rule"
        pattern = always_ask_match(request.command, self.always_ask) if request.command is not None else None
        if pattern is not None:
            what = ALWAYS_ASK_LABELS.get(pattern, "a command on the always-confirm list")
            return "ask", f"Always confirmed: this command is {what}, so an answer is never remembered for it."
        if request.asks_every_time:
            return "ask", request.asks_every_time
        rule = next((r for r in every if r.action == "ask" and r.matches(request, relative)), None)
        if rule is not None:
            return "ask", f"Always confirmed: the permission rule {json.dumps(rule.to_json())} asks every time."
        if any(r.action == "allow" and r.matches(request, relative) for r in every):
            return "allow", None
        default = self.defaults.get(request.tool) or self.defaults.get(request.kind, "ask")
        if default == "ask" and request.kind == "command" and request.sandboxed and self.sandboxed_commands == "allow":
            return "allow", None  # the worst it can do is in the workspace, where turn revert undoes it
        return default, None

    async def authorize(self, editor: Editor, request: PermissionRequest) -> Verdict:
        if request.kind != "read" and self.mode_of(request.session_id) == "plan":
            return Verdict(False, PLAN_MODE_REFUSAL)
        action, pinned = self._decide(request)
        if action == "allow":
            return Verdict(True)
        if action == "deny":
            return Verdict(False, "A permission rule of this workspace denies it.")
        if pinned:
            request = dataclasses.replace(request, choices=("once", "deny"), asks_every_time=pinned)
        try:
            answer = await asyncio.wait_for(editor.ask_permission(request), self.ask_timeout_s)
        except asyncio.TimeoutError:
            return Verdict(False, f"Nobody answered within {self.ask_timeout_s:g} s, so it is denied.")
        except Exception as e:  # an editor that fails to ask has not said yes
            return Verdict(False, f"The question could not be asked ({type(e).__name__}), so it is denied.")
        if answer not in ANSWERS or answer == "deny":
            return Verdict(False, "The user denied it.")
        if answer in ("session", "always") and not pinned:
            self.grant(request, answer)
        return Verdict(True)

    # -------------------------------------------------------------- grants

    def grant(self, request: PermissionRequest, scope: Literal["session", "always"]) -> PermissionRule:
        rule = self._rule_for(request)
        if scope == "session":
            self._session_grants.setdefault(request.session_id or "", []).append(rule)
        else:
            self._store([*self.stored_rules(), rule])
        return rule

    def listed_rules(self) -> list[ListedRule]:
        """Every rule in force: configured, remembered for the workspace, per session."""
        listed = [ListedRule(_rule_id(scope, rule), rule, scope, source)
                  for rule, (scope, source) in zip(self.rules, self.rule_sources)]
        where = str(self.store_path) if self.store_path is not None else "this server (not saved)"
        listed += [ListedRule(_rule_id("workspace", rule), rule, "workspace", where) for rule in self.stored_rules()]
        for session_id, grants in self._session_grants.items():
            listed += [ListedRule(_rule_id("session", rule, session_id), rule, "session",
                                  f"answered for session {session_id}", session_id or None) for rule in grants]
        return list({entry.id: entry for entry in listed}.values())  # equal rules are one entry

    def revoke(self, rule_id: str) -> ListedRule:
        """Forget a remembered rule (every copy of it). KeyError: no rule has
        that id; ValueError: it is not a remembered one."""
        entry = next((e for e in self.listed_rules() if e.id == rule_id), None)
        if entry is None:
            raise KeyError(rule_id)
        if entry.scope == "workspace":
            self._store([r for r in self.stored_rules() if r != entry.rule])
        elif entry.scope == "session":
            grants = self._session_grants.get(entry.session_id or "", [])
            grants[:] = [r for r in grants if r != entry.rule]
        else:
            raise ValueError(f"this rule comes from {entry.source}: change it there")
        return entry

    def forget_session(self, session_id: str) -> None:
        self._session_grants.pop(session_id, None)

    def _rule_for(self, request: PermissionRequest) -> PermissionRule:
        if request.command is not None:
            return PermissionRule(request.tool, "allow", command_prefix=" ".join(request.command.split()))
        relative = self._relative(request.path)
        return PermissionRule(request.tool, "allow", path_glob=relative)

    def _relative(self, path: Path | None) -> str | None:
        if path is None:
            return None
        path = Path(os.path.abspath(path))
        for root in self.roots:
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        return path.as_posix()

    # --------------------------------------------------------- persistence

    def stored_rules(self) -> list[PermissionRule]:
        """The "always" rules, re-read when the file changed (another editor may have added one)."""
        if self.store_path is None:
            return self._stored
        try:
            st = self.store_path.stat()
        except FileNotFoundError:
            self._stored, self._stored_stamp = [], None
            return self._stored
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stored_stamp:
            self._stored = _read_rules(self.store_path)
            self._stored_stamp = stamp
        return self._stored

    def _store(self, rules: list[PermissionRule]) -> None:
        self._stored = rules
        if self.store_path is None:
            return
        self.store_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.store_path.with_name(self.store_path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": 1, "rules": [r.to_json() for r in rules]}, indent=2) + "\n")
        os.replace(tmp, self.store_path)
        st = self.store_path.stat()
        self._stored_stamp = (st.st_mtime_ns, st.st_size)


def _read_rules(path: Path) -> list[PermissionRule]:
    """A damaged file grants nothing (and is not overwritten until the next "always")."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [PermissionRule.from_json(r) for r in data.get("rules", [])]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


__all__ = ["ListedRule", "PermissionPolicy", "PermissionRule", "ALWAYS_ASK_PATTERNS", "always_ask_match", "command_has_prefix", "is_always_ask"]
