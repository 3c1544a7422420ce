"""Sub-agents: child sessions a parent's `subagent` tool call runs to their end.

A child is an ordinary session of the same folder (so it is stored, listed,
loaded, streamed and crash-repaired like any other), linked to its parent in
its header meta (`parentSessionId`, `parentToolCallId`) and, in the parent's
log, by a durable `subagent/start` event. It gets:

- its own tools: the read-only ones, or those its agent type names (never
  `subagent` itself, so sub-agents do not nest);
- its own model: the parent's settings, or the model its agent type names;
- its own cancel signal: cancelling the parent's turn cancels it (cause
  `parent`); `cancel(child_id)` cancels it alone (cause `user`), and the
  parent's tool result then says it was cancelled;
- its usage summed into the parent's tool result (`meta.subagent.usage`).

Its lifecycle reaches the parent's clients as the live `agent/subagent/status`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from agent_lsp.agent import Agent, ToolRegistry
from agent_lsp.agent.ports import ToolContext
from agent_lsp.llm.types import message_text
from agent_lsp.store import Event
from agent_lsp.tools.subagent import NAME as SUBAGENT_TOOL
from agent_lsp.tools.subagent import SubagentInput, SubagentOutcome
from agent_lsp.workspace.agent_types import AgentType, load_agent_types

if TYPE_CHECKING:
    from agent_lsp.workspace.open_sessions import OpenSessions
    from agent_lsp.workspace.session_modes import SessionModes

log = logging.getLogger(__name__)

READ_ONLY_TOOLS = ("read_file", "list_dir", "glob", "grep", "language")  # language: its questions only
START_EVENT = "subagent/start"
STATUS_EVENT = "agent/subagent/status"

CHILD_PROMPT = """\
You are a sub-agent: another agent handed you the task below. Work on it with your tools, then end \
with a complete, self-contained report of what you found or did: that report is all the other agent \
will see of your work."""


class Subagents:
    """The sub-agents of one workspace folder (the tool's `SubagentRunner`): its
    children are sessions of `sessions`, in the parent's mode (`modes`), with
    tools of the folder's registry (`tools()`) and its system prompt
    (`system_prompt()`); agent types are read from `folders`."""

    def __init__(self, sessions: OpenSessions, modes: SessionModes, uri: str, folders: list[Path], *,
                 tools: Callable[[], ToolRegistry], system_prompt: Callable[[], str]):
        self.sessions = sessions
        self.modes = modes
        self.uri = uri
        self.tools = tools
        self.system_prompt = system_prompt
        self.running: dict[str, Agent] = {}  # child session id -> its agent
        self.folders = folders
        self.reload_types()

    def reload_types(self) -> None:
        """Read the agent types' files (again: they changed)."""
        self.types, self.problems = load_agent_types(self.folders)
        for problem in self.problems:
            log.warning("%s", problem)

    def agent_types(self) -> dict[str, str]:
        return {name: t.description for name, t in self.types.items()}

    def cancel(self, session_id: str) -> bool:
        """Cancel one running child alone (its parent's turn goes on); False if
        `session_id` is no running child of this folder."""
        child = self.running.get(session_id)
        if child is not None:
            child.cancel("user")
        return child is not None

    # ------------------------------------------------------------------- run

    async def run(self, args: SubagentInput, ctx: ToolContext) -> SubagentOutcome:
        agent_type = self._agent_type(args.agent_type)
        parent = self.sessions.agents.get(ctx.session_id)
        meta = {"workspaceUri": self.uri, "parentSessionId": ctx.session_id, "parentToolCallId": ctx.call_id,
                "description": args.description}
        if agent_type is not None:
            meta["agentType"] = agent_type.name
        session = self.sessions.store.create(title=args.description, meta=meta)
        child = self.sessions.build_agent(
            session,
            tools=self._tools_for(agent_type),
            system_prompt=self._prompt_for(agent_type),
            model=agent_type.model if agent_type else None,
        )
        child_id = child.session_id
        self.modes.inherit(child, ctx.session_id)
        self.running[child_id] = child
        link = {"callId": ctx.call_id, "childSessionId": child_id, "description": args.description}
        if agent_type is not None:
            link["agentType"] = agent_type.name
        if parent is not None:
            parent.session.append(START_EVENT, {"turn": ctx.turn, "step": ctx.step, **link})
            parent.emit(STATUS_EVENT, {**link, "status": "running"})
        off = ctx.signal.on_abort(lambda cause: child.cancel("parent"))
        try:
            child.followup(args.task)
            await child.when_idle()
            outcome = outcome_of(child_id, child.session.events)
        finally:
            off()
            self.running.pop(child_id, None)
            await self.sessions.retire_agent(child)
        if parent is not None:
            parent.emit(STATUS_EVENT, {**link, "status": outcome.status, "usage": outcome.usage})
        return outcome

    def _agent_type(self, name: str | None) -> AgentType | None:
        if name is None:
            return None
        agent_type = self.types.get(name)
        if agent_type is None:
            known = ", ".join(sorted(self.types)) or "none are defined"
            raise ValueError(f"unknown agent type {name!r} (known: {known})")
        return agent_type

    def _tools_for(self, agent_type: AgentType | None) -> ToolRegistry:
        wanted = agent_type.tools if agent_type is not None and agent_type.tools is not None else READ_ONLY_TOOLS
        from agent_lsp.tools.language import LanguageReader, LanguageTool  # with the first sub-agent only

        registry = self.tools()
        tools = [registry.get(name) for name in wanted if name != SUBAGENT_TOOL and name in registry]
        if wanted is READ_ONLY_TOOLS:
            tools = [LanguageReader(t.env) if isinstance(t, LanguageTool) else t for t in tools]
        return ToolRegistry(tools)

    def _prompt_for(self, agent_type: AgentType | None) -> str:
        base = self.system_prompt()
        if agent_type is not None and agent_type.system_prompt:
            return f"{agent_type.system_prompt}\n\n{CHILD_PROMPT}\n\n{base}"
        return f"{CHILD_PROMPT}\n\n{base}"


def outcome_of(session_id: str, events: list[Event]) -> SubagentOutcome:
    """How the child's last turn ended: its answer, usage and status."""
    usage: dict[str, int] = {}
    answer = ""
    reason: dict[str, Any] = {}
    for event in events:
        if event.type == "turn/start":
            reason = {}
        elif event.type == "assistant/message":
            for key, value in (event.data.get("usage") or {}).items():
                if isinstance(value, int):
                    usage[key] = usage.get(key, 0) + value
            text = message_text(event.data.get("message") or {}).strip()
            if text:
                answer = text
        elif event.type == "turn/end":
            reason = event.data.get("reason") or {}
    kind = reason.get("kind")
    if kind in ("completed", "max-tokens"):
        return SubagentOutcome(session_id, "completed", answer, usage)
    if kind == "aborted":
        cause = (reason.get("reason") or {}).get("kind")
        why = {"user": "the user cancelled it", "parent": "this turn was cancelled",
               "disposed": "the server stopped it"}.get(cause, "it was cancelled")
        return SubagentOutcome(session_id, "cancelled", answer, usage, why)
    if kind == "error":
        error = reason.get("error") or {}
        why = f"{error.get('code', 'ERROR')}: {error.get('message', '')}".rstrip(": ")
        return SubagentOutcome(session_id, "failed", answer, usage, why)
    if kind == "blocked":
        return SubagentOutcome(session_id, "failed", answer, usage, reason.get("message") or "its turn was blocked")
    return SubagentOutcome(session_id, "failed", answer, usage, f"its turn ended without an answer ({kind or 'no turn'})")
