"""Project rules and memory, entered as runtime context (after the stable prompt prefix).

Rules are Markdown files beside AGENTS.md, in `.agents/rules/` (and
`.claude/rules/`, so existing ones work), each optionally scoped to paths:

    ---
    description: Conventions of the HTTP handlers
    globs: src/api/**/*.py, tests/api/**
    ---
    Handlers validate input with pydantic models; ...

(`paths` is read as `globs` too; a list may also be written `[a, b]`). A rule
with globs enters the session the first time the agent touches a matching
file: a tool call naming it (`path`, `oldPath`, `newPath`, ... arguments, as
read_file, edit_file or rename_file take). A rule without globs enters at the
session's first step. The project memory (agent_lsp.tools.memory) enters at
the first step too, as it is then.

Each enters once, as a user message of source "rules" placed after the turn's
messages at a step boundary (an `agent/pre-step` listener): the system prompt
and the tool list stay as they were, so provider prompt caches keep hitting.
What is still on the model's surface is not entered again; after a
compaction that dropped it, it is entered again when it applies.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from agent_lsp.agent import Agent
from agent_lsp.agent.inbox import make_message
from agent_lsp.tools.front_matter import field_list, split_front_matter
from agent_lsp.tools.memory import MEMORY_FILE, memory_text
from agent_lsp.tools.search import compile_glob

log = logging.getLogger(__name__)

RULE_FOLDERS = (".claude/rules", ".agents/rules")
RULES_SOURCE = "rules"  # the source of the messages this module enters
MAX_RULE_CHARS = 32_000


@dataclass(frozen=True)
class Rule:
    relative: str  # e.g. ".agents/rules/api.md"
    globs: tuple[str, ...]  # () : always
    text: str

    def applies_to(self, relative_path: str) -> bool:
        return any(compile_glob(glob).match(relative_path) for glob in self.globs)

    @property
    def marker(self) -> str:
        return f'<rule file="{self.relative}">'

    def message_text(self) -> str:
        scope = f" (for {', '.join(self.globs)})" if self.globs else ""
        return f"Project rule from {self.relative}{scope}:\n{self.marker}\n{self.text}\n</rule>"


def load_rules(root: Path) -> tuple[list[Rule], list[str]]:
    rules: list[Rule] = []
    problems: list[str] = []
    for folder in RULE_FOLDERS:
        try:
            files = sorted((root / folder).glob("*.md")) if (root / folder).is_dir() else []
        except OSError:
            continue
        for path in files:
            relative = path.relative_to(root).as_posix()
            try:
                fields, body = split_front_matter(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as error:
                problems.append(f"rule {relative}: cannot be read ({error})")
                continue
            except ValueError as error:
                problems.append(f"rule {relative}: {error}")
                continue
            text = body.strip()
            if len(text) > MAX_RULE_CHARS:
                text = text[:MAX_RULE_CHARS] + f"\n[… cut at {MAX_RULE_CHARS} characters]"
            if text:
                fields = fields or {}
                rules.append(Rule(relative, field_list(fields.get("globs") or fields.get("paths")), text))
    return rules, problems



def attach_rules(agent: Agent, root: Path, rules: Iterable[Rule]) -> None:
    """Put the rules and the project memory on the agent's `agent/pre-step`."""
    _RulesContext(agent, root, list(rules)).register()


class _RulesContext:
    def __init__(self, agent: Agent, root: Path, rules: list[Rule]):
        self.agent = agent
        self.root = root
        self.rules = rules
        self.touched: set[str] = set()
        self.scanned = 0  # session events already looked at for touched paths

    def register(self) -> None:
        self.agent.hooks.register("agent/pre-step", self.pre_step)

    async def pre_step(self, payload: dict[str, Any], next_: Callable) -> Any:
        entered = self._entries(first_step=payload.get("step") == 1)
        if not entered:
            return await next_()
        return await next_({**payload, "messages": [*payload["messages"], *entered]})

    def _entries(self, *, first_step: bool) -> list[dict[str, Any]]:
        self._scan_tool_calls()
        present = self._on_surface()
        texts = []
        if first_step and "<project-memory>" not in present:
            memory = memory_text(self.root)
            if memory:
                texts.append(f"Project memory from {MEMORY_FILE} (your notes of earlier sessions; the user may edit them):\n"
                             f"<project-memory>\n{memory}\n</project-memory>")
        for rule in self.rules:
            if rule.marker in present:
                continue
            if (not rule.globs and first_step) or any(rule.applies_to(p) for p in self.touched):
                texts.append(rule.message_text())
        return [make_message(text, source=RULES_SOURCE) for text in texts]

    def _scan_tool_calls(self) -> None:
        events = self.agent.session.events
        for event in events[self.scanned:]:
            if event.type == "tool/call":
                for path in _paths_in(event.data.get("arguments")):
                    relative = self._relative(path)
                    if relative is not None:
                        self.touched.add(relative)
        self.scanned = len(events)

    def _on_surface(self) -> str:
        """The text of the rules messages still in model history."""
        session = self.agent.session
        texts = []
        for seq in session.surface:
            event = session.events[seq]
            message = event.data.get("message") if event.type == "user/message" else None
            if isinstance(message, dict) and message.get("source") == RULES_SOURCE:
                texts += [b.get("text", "") for b in message.get("content", ()) if isinstance(b, dict)]
        return "\n".join(texts)

    def _relative(self, raw: str) -> str | None:
        path = Path(raw)
        if not path.is_absolute():
            path = self.root / path
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return None


def _paths_in(arguments: Any) -> list[str]:
    """The path-like arguments of a tool call (raw JSON text or an object)."""
    if isinstance(arguments, str):
        import json

        try:
            arguments = json.loads(arguments)
        except ValueError:
            return []
    if not isinstance(arguments, dict):
        return []
    return [v for k, v in arguments.items() if isinstance(v, str) and k.lower().endswith("path")]
