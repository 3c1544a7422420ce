"""The live events of an agent (never persisted), one model each,
`LIVE_EVENTS` (type to model) and `CLIENT_LIVE_EVENTS` (those a client is sent)."""

from __future__ import annotations

from typing import Any, Literal

from agent_lsp.agent.durable_events import ToolResult
from agent_lsp.agent.event_shapes import EventModel, LlmFailure, Message, Usage


class Status(EventModel):
    status: Literal["idle", "running"]


class InboxInserted(EventModel):
    target: Literal["next-turn", "next-step"]
    message: Message


class InboxDiscarded(EventModel):
    """A queued message removed (agent/inbox/remove) or cleared by a cancel."""

    target: Literal["next-turn", "next-step"]
    message: Message


class InboxChanged(EventModel):
    """After a queue edit (update, move, pause): both lists as they are now."""

    next_turn: list[Message]
    next_step: list[Message]
    paused: bool


class InboxClaimed(EventModel):
    message: Message
    turn: int


class AgentError(EventModel):
    """Before the durable `turn/end error`; `step` is null for a failed idle
    flush (`code: PERSISTENCE`)."""

    turn: int | None = None
    step: int | None = None
    error: LlmFailure


class ToolProgress(EventModel):
    """From `ctx.progress(data)` in a tool body, e.g. `{stream: "stdout", text}`."""

    call_id: str
    data: dict[str, Any]


class AgentRef(EventModel):
    agent_id: str
    session_id: str


class SessionStart(EventModel):
    source: Literal["startup", "resume", "clear", "compact"]
    session_id: str
    compaction_id: str | None = None


class ToolResultLive(EventModel):
    """After the durable `tool/result`: the tool's ToolOutput object itself."""

    call_id: str
    name: str
    output: Any
    data: ToolResult


class SubagentStatus(EventModel):
    """A parent's sub-agent started (`running`) or ended; `usage` (summed over the
    child's model calls) comes with the end."""

    call_id: str
    child_session_id: str
    description: str
    agent_type: str | None = None
    status: Literal["running", "completed", "cancelled", "failed"]
    usage: Usage | None = None


LIVE_EVENTS: dict[str, type[EventModel]] = {
    "agent/created": AgentRef,
    "agent/session-start": SessionStart,
    "agent/status": Status,
    "agent/inbox/inserted": InboxInserted,
    "agent/inbox/discarded": InboxDiscarded,
    "agent/inbox/claimed": InboxClaimed,
    "agent/inbox/changed": InboxChanged,
    "agent/error": AgentError,
    "agent/tool/progress": ToolProgress,
    "agent/tool/result": ToolResultLive,
    "agent/disposed": AgentRef,
    "agent/subagent/status": SubagentStatus,
}

# The live events a client is sent (as notifications of the same name).
CLIENT_LIVE_EVENTS = (
    "agent/status", "agent/inbox/inserted", "agent/inbox/discarded", "agent/inbox/claimed",
    "agent/inbox/changed", "agent/error", "agent/tool/progress", "agent/subagent/status",
)
