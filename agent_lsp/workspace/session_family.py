"""Forks and rewinds of a session: where a fork cuts the parent's log, what
the session list shows of a family, and what a rewind did.

A fork at turn N is a new session seeded with the parent's events up to the
`turn/end` of turn N (`SessionStore.fork`); its header names the parent
(`parentSession`) and its meta says where it was forked (`forkedFrom:
{sessionId, turn}`), which the session list shows as `parentSessionId` and
`forkTurn`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from agent_lsp.views.markdown import session_title
from agent_lsp.workspace.edit_journal import RevertReport

FORKED_FROM = "forkedFrom"  # the child's meta key


class ForkError(ValueError):
    """A fork that cannot be made, in words for the user."""


@dataclass
class RewindOutcome:
    removed_messages: int = 0
    reverts: list[tuple[int, RevertReport]] = field(default_factory=list)  # (turn, its revert), newest first


def fork_boundary(events: Iterable[Any], turn: int) -> int:
    """The seq of the `turn/end` of `turn`: the last event a fork at it copies."""
    started = False
    for event in events:
        if event.type == "turn/start" and event.data.get("turn") == turn:
            started = True
        elif event.type == "turn/end" and event.data.get("turn") == turn:
            return event.seq
    raise ForkError(f"turn {turn} is still running" if started else f"the session has no turn {turn}")


def fork_title(events: Iterable[Any], header: dict[str, Any], boundary: int, turn: int) -> str:
    """A fork's own title: its parent's (`header`: its log's, title and meta) as of
    the fork, and where it was forked, so the two read apart in the session list."""
    meta = {"title": header.get("title"), **(header.get("meta") or {})}
    title = session_title((e for e in events if e.seq <= boundary), meta)
    return f"{title or 'Session'} (fork at turn {turn})"


def fork_turn_of(meta: dict[str, Any]) -> int | None:
    forked = meta.get(FORKED_FROM)
    turn = forked.get("turn") if isinstance(forked, dict) else None
    return turn if isinstance(turn, int) else None
