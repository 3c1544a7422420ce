"""Each session's permission mode and plan, both kept in its log.

- The mode (`default` or `plan`, `agent_lsp.workspace.permissions`) is the
  last `session/mode` event's; `set_mode` appends one and tells the model with
  a message queued for its next step (source `plan-mode`). Leaving plan mode
  can carry the plan into that message, so the next turn starts from it.
- The plan is the last `plan/update` event's items, written by the
  `todo_write` tool (this is its `PlanBoard`).

Other faces (the LSP requests, an ACP session) read and change both here, and
see the changes as those durable events in the session's stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_lsp.agent.ports import ToolContext
from agent_lsp.store import Event
from agent_lsp.tools.todo import MARKS
from agent_lsp.workspace.permissions import PERMISSION_MODES

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.open_sessions import OpenSessions

MODE_EVENT = "session/mode"
PLAN_EVENT = "plan/update"
MESSAGE_SOURCE = "plan-mode"

PLAN_MODE_ON = (
    "The user switched this session to plan mode. Research and plan only: read and search the workspace, "
    "then write the plan with todo_write and explain it. Editing files and running commands are refused "
    "until the user leaves plan mode."
)
PLAN_MODE_OFF = "The user left plan mode: you may edit files and run commands again."


def mode_in(events: list[Event]) -> str:
    for event in reversed(events):
        if event.type == MODE_EVENT:
            return str(event.data.get("mode", "default"))
    return "default"


def plan_in(events: list[Event]) -> list[dict[str, Any]]:
    for event in reversed(events):
        if event.type == PLAN_EVENT:
            return list(event.data.get("items") or [])
    return []


def plan_text(items: list[dict[str, Any]]) -> str:
    return "\n".join(f"{MARKS.get(item.get('status', 'pending'), '[ ]')} {item.get('content', '')}" for item in items)


class SessionModes:
    def __init__(self, sessions: OpenSessions):
        self.sessions = sessions
        self._modes: dict[str, str] = {}  # session id -> mode, for live sessions (read from the log once)

    def mode_of(self, session_id: str | None) -> str:
        if not session_id:
            return "default"
        mode = self._modes.get(session_id)
        if mode is None:
            agent = self.sessions.agents.get(session_id)
            if agent is None:
                return "default"
            mode = self._modes[session_id] = mode_in(agent.session.events)
        return mode

    def plan_of(self, agent: Agent) -> list[dict[str, Any]]:
        return plan_in(agent.session.events)

    def forget(self, session_id: str) -> None:
        self._modes.pop(session_id, None)

    def set_mode(self, agent: Agent, mode: str, *, carry_plan: bool = True) -> dict[str, Any]:
        """Switch the session's mode (recorded in its log, told to the model at
        its next step); the same mode again changes nothing and records nothing."""
        if mode not in PERMISSION_MODES:
            raise ValueError(f"mode must be one of {', '.join(PERMISSION_MODES)}, not {mode!r}")
        sid = agent.session_id
        previous = self.mode_of(sid)
        data: dict[str, Any] = {"mode": mode, "previous": previous}
        if mode == previous:
            return data
        plan = self.plan_of(agent) if mode == "default" and carry_plan else []
        if plan:
            data["carriedPlan"] = True
        agent.session.append(MODE_EVENT, data)
        self._modes[sid] = mode
        if mode == "plan":
            message = PLAN_MODE_ON
        elif plan:
            message = f"{PLAN_MODE_OFF} Carry out the plan you wrote:\n{plan_text(plan)}"
        else:
            message = PLAN_MODE_OFF
        agent.inject(message, source=MESSAGE_SOURCE)  # flushes the log when the session is idle
        return data

    def inherit(self, child: Agent, parent_session_id: str) -> None:
        """A sub-agent works in its parent's mode."""
        if self.mode_of(parent_session_id) == "plan":
            child.session.append(MODE_EVENT, {"mode": "plan", "previous": "default"})
            self._modes[child.session_id] = "plan"

    # ------------------------------------------------------------ PlanBoard

    def update(self, ctx: ToolContext, items: list[dict]) -> None:
        agent = self.sessions.agents.get(ctx.session_id)
        if agent is not None:
            agent.session.append(PLAN_EVENT, {"turn": ctx.turn, "step": ctx.step, "callId": ctx.call_id, "items": items})
