"""Rewind: cut the model's history back to before a turn.

A rewind is one durable event, `session/rewind`, whose positional surface
replacement (`surfaceOp: {kind: "replace", start, end}`) turns the surface
nodes of the rewound turns into this single node, which carries no message:
the model's next request holds the history as it was before the turn. The
events themselves stay in the log (replay shows the turns, then the rewind),
and the turn numbering goes on. Rewinding is refused while a turn runs, and
where compaction folded the turn into a summary of earlier turns.
"""

from __future__ import annotations

from typing import Any

from agent_lsp.agent.history import MESSAGE_EVENTS
from agent_lsp.store.session import Session

REWIND_EVENT = "session/rewind"


class RewindError(ValueError):
    """A rewind that cannot be done, in words for the user."""


def turn_start_seq(session: Session, turn: int) -> int | None:
    for event in session.events:
        if event.type == "turn/start" and event.data.get("turn") == turn:
            return event.seq
    return None


def rewind_data(session: Session, turn: int) -> dict[str, Any]:
    """The data of the `session/rewind` event that cuts the history back to
    before `turn`; RewindError when that cannot be done."""
    start = turn_start_seq(session, turn)
    if start is None:
        raise RewindError(f"the session has no turn {turn}")
    events, surface = session.events, session.surface

    def sources(seq: int) -> list[int]:
        # a compaction checkpoint stands for the nodes it replaced (sourceEventSeqs), an earlier rewind for
        # the nodes it cut (removedSeqs)
        data = events[seq].data
        listed = data.get("removedSeqs") if events[seq].type == REWIND_EVENT else data.get("sourceEventSeqs")
        return [s for s in listed if isinstance(s, int)] if isinstance(listed, list) and listed else [seq]

    def origin(seq: int) -> int:
        return min(sources(seq))

    cut = next((i for i, seq in enumerate(surface) if origin(seq) >= start), None)
    if cut is None or all(events[seq].data.get("message") is None for seq in surface[cut:]):
        raise RewindError(f"turn {turn} is not in the history any more (rewound already)")
    if any(origin(seq) < start for seq in surface[cut:]):
        raise RewindError(f"turn {turn} was compacted together with earlier turns; rewind to a later turn")
    for seq in surface[:cut]:
        if any(s >= start and events[s].type in MESSAGE_EVENTS for s in sources(seq) if s < len(events)):
            raise RewindError(f"turn {turn} was compacted together with earlier turns; rewind to a later turn")
    removed = surface[cut:]
    return {
        "turn": turn,
        "surfaceOp": {"kind": "replace", "start": removed[0], "end": removed[-1]},
        "removedSeqs": list(removed),
    }
