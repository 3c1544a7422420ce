"""A folder's sessions listed, and one read without opening it.

The listing is the store's summaries (with `query`, those whose title or
message text has each of its words: `SessionStore.search`) and each live
session's status; a damaged file is listed too, saying what is wrong. A
snapshot reads a session another process has open, or one whose file is
damaged (its events up to the damage), without taking its lock or writing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from agent_lsp.agent.inbox import Inbox
from agent_lsp.store import CorruptSessionError, Event, Session, SessionStore, SessionSummary
from agent_lsp.store.damaged import describe, read_until_damage
from agent_lsp.workspace.open_sessions import UnknownSession
from agent_lsp.workspace.session_family import fork_turn_of

if TYPE_CHECKING:
    from agent_lsp.agent import Agent


@dataclass
class SessionListing:
    session_id: str
    title: str | None
    created_at: int
    updated_at: int
    turns: int
    status: str
    parent_session_id: str | None = None
    fork_turn: int | None = None  # a fork: the parent's last turn it shares
    usage: dict | None = None  # tokens and estimated cost so far (UsageTotal of agent/event_shapes.py)
    parent_tool_call_id: str | None = None  # a sub-agent's session: the parent's call that ran it
    excerpt: str | None = None  # listed for a query: the message text around what matched
    problem: str | None = None  # a damaged session file: what and where (store/damaged.py)


@dataclass
class SessionSnapshot:
    """A session as stored, read without opening it (it is open in another process)."""

    events: list[Event]
    next_turn: list[dict]
    next_step: list[dict]
    running: bool  # its last turn is still open
    held_by: int | None  # the pid of the process that has it open
    problem: str | None = None  # a damaged file: its events up to the damage, and this says where


Found = tuple[list[SessionSummary], dict[str, str | None] | None]


def matching(store: SessionStore, query: str | None) -> Found:
    """The store's summaries, and with `query` the ids that match it with their excerpts."""
    summaries = store.list()
    return summaries, store.search(query, summaries) if query else None


def listings(store: SessionStore, found: Found, agents: Mapping[str, Agent],
             damaged: Mapping[str, CorruptSessionError] | None = None) -> list[SessionListing]:
    """`damaged`: sessions whose load found damage the store's quick scan read past."""
    damaged = damaged or {}
    summaries, matched = found
    listed = []
    for summary in summaries:
        if matched is not None and summary.id not in matched:
            continue
        live = agents.get(summary.id)
        listed.append(
            SessionListing(
                session_id=summary.id,
                title=summary.title,
                created_at=summary.created,
                updated_at=summary.updated,
                turns=summary.turns,
                status=live.status if live else "idle",
                parent_session_id=summary.parent or (summary.meta or {}).get("parentSessionId"),
                fork_turn=fork_turn_of(summary.meta),
                usage=summary.usage,
                parent_tool_call_id=None if summary.parent else (summary.meta or {}).get("parentToolCallId"),
                excerpt=matched.get(summary.id) if matched is not None else None,
                problem=describe(damaged[summary.id]) if summary.id in damaged else None,
            )
        )
    if matched is None:  # damaged files are listed too, saying what is wrong (they hold no searchable text)
        listed.extend(_damaged_listing(error) for error in store.list_errors)
    return listed


def _damaged_listing(error: CorruptSessionError) -> SessionListing:
    try:
        mtime_ms = error.path.stat().st_mtime_ns // 1_000_000
    except OSError:
        mtime_ms = 0
    return SessionListing(session_id=error.path.stem, title=None, created_at=mtime_ms, updated_at=mtime_ms, turns=0,
                          status="idle", problem=describe(error))


def snapshot(store: SessionStore, session_id: str) -> SessionSnapshot:
    """Read a session without opening it (for one open in another process)."""
    if not store.path_of(session_id).exists():
        raise UnknownSession(session_id)
    header, events = store.snapshot(session_id)
    inbox = Inbox(Session(session_id), lambda name, payload: None)
    inbox.rebuild(events[int(header.get("seedLength") or 0):])
    open_turn = next((e.type == "turn/start" for e in reversed(events) if e.type in ("turn/start", "turn/end")), False)
    holder = store.holder_of(session_id)
    return SessionSnapshot(events, inbox.next_turn, inbox.next_step, open_turn, holder if holder and holder > 0 else None)


def damaged_snapshot(store: SessionStore, session_id: str) -> SessionSnapshot:
    """Read a session whose file is damaged, without opening or writing it: the
    events up to the damage. CorruptSessionError when nothing is readable."""
    path = store.path_of(session_id)
    if not path.exists():
        raise UnknownSession(session_id)
    read = read_until_damage(path)
    events = read.events
    inbox = Inbox(Session(session_id), lambda name, payload: None)
    seed = read.header.get("seedLength")
    inbox.rebuild(events[seed if isinstance(seed, int) and 0 <= seed <= len(events) else 0:])
    problem = describe(read.damage) if read.damage is not None else None
    return SessionSnapshot(events, inbox.next_turn, inbox.next_step, False, None, problem)
