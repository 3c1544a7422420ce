"""The agent's event stream: what `agent.subscribe(fn)` delivers.

Two kinds reach `agent.subscribe(fn)`, in one stream:

- durable events (`Event` of the session log: `seq`, `time`, `type`,
  `data`), delivered after commit in seq order;
- live events (`LiveEvent`: `type`, `data`), never persisted.

The names are the wire names: `turn/start` is a `session/event` entry of type
`turn/start`, `agent/status` is the `agent/status` notification (its params
are `{sessionId, **data}`). One pydantic model describes each `data`
(agent/durable_events.py, agent/live_events.py, made of agent/event_shapes.py);
the wire schema (docs/protocol.schema.json) is generated from them, and the
agent tests check every event the loop emits against them. At run time the
loop builds plain dicts (the chunk path is hot): the models are the contract,
not a per-event validation step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

from agent_lsp.store.session import Event


@dataclass(slots=True, frozen=True)
class LiveEvent:
    """A live event: `type` is one of LIVE_EVENTS, `data` fits its model."""

    type: str
    data: dict[str, Any]


AgentEvent = Union[Event, LiveEvent]
"""What `agent.subscribe(fn)` delivers: `isinstance(e, Event)` for durable ones."""


def complete_failure(data: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of a failure with `code` and `message` filled in where missing:
    every failure the loop reports carries both."""
    out = dict(data or {})
    out.setdefault("code", "UNKNOWN")
    if not out.get("message"):
        out["message"] = out["code"]
    return out


def only(type: str, fn: Callable[[dict[str, Any]], Any]) -> Callable[[AgentEvent], None]:
    """A subscriber that hands `fn` the data of the events of one type:
    `agent.subscribe(only("agent/status", lambda data: ...))`."""

    def deliver(event: AgentEvent) -> None:
        if event.type == type:
            fn(event.data)

    return deliver
