"""Requests about sessions: agent/session/new | list | load | replay | delete |
rename | compact and agent/turn/revert."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer, unknown_session
from agent_lsp.lsp.rpc import SessionDamaged, SessionInUse, parse
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.event_log import EventLog, UnreadableEventError
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.store.replay import page_backward, page_forward
from agent_lsp.workspace.session_titles import TitleError

if TYPE_CHECKING:
    from agent_lsp.workspace.host import SessionListing, WorkspaceHost

log = logging.getLogger(__name__)


def register(server: AgentLanguageServer) -> None:
    @server.feature("agent/session/new")
    async def session_new(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionNewParams, params)
        await ls.ready()
        agent = ls.host_for_uri(p.workspace_uri).new_session(title=p.title)
        return wire.wire_dump(wire.SessionRef(session_id=agent.session_id))

    @server.feature("agent/session/list")
    async def session_list(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionListParams, params)
        await ls.ready()
        hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
        listed = [(host, await host.list_sessions_off_loop(p.query)) for host in hosts]
        return wire.wire_dump(wire.SessionListResult(sessions=list_sessions(listed, p)))

    @server.feature("agent/session/load")
    async def session_load(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionRef, params)
        await ls.ready()
        answer = load_session(ls, p.session_id)
        if answer.get("problem"):
            ls.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"agent-lsp: {answer['problem']}; showing what comes before it, read-only"))
        recovered = ls.host_for_session(p.session_id).take_recovered(p.session_id)  # a revert a crash interrupted
        if recovered:
            ls.show(f"agent-lsp: {recovered}", types.MessageType.Warning)
        return answer

    @server.feature("agent/session/replay")
    async def session_replay(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionReplayParams, params)
        await ls.ready()
        return replay_session(ls, p)

    @server.feature("agent/session/delete")
    async def session_delete(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionRef, params)
        try:
            host = ls.host_for_session(p.session_id)
        except JsonRpcInvalidParams:
            return wire.wire_dump(wire.SessionDeleteResult(deleted=False))
        try:
            deleted = await host.delete_session(p.session_id)
        except SessionLockedError as error:
            raise SessionInUse(error) from None
        return wire.wire_dump(wire.SessionDeleteResult(deleted=deleted))

    @server.feature("agent/session/rename")
    async def session_rename(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionRenameParams, params)
        await ls.ready()
        host, agent = ls.agent_for(p.session_id)
        try:
            title = host.titles.rename(agent, p.title)
        except TitleError as error:
            raise JsonRpcInvalidParams(str(error)) from None
        return wire.wire_dump(wire.SessionRenameResult(title=title))

    @server.feature("agent/session/compact")
    async def session_compact(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionRef, params)
        return wire.wire_dump(wire.SessionCompactResult(compacted=await compact_session(ls, p.session_id)))

    @server.feature("agent/turn/revert")
    async def turn_revert(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.TurnRevertParams, params)
        host = ls.host_for_session(p.session_id)
        try:
            report = await host.revert_turn(p.session_id, p.turn)
        except SessionLockedError as error:
            raise SessionInUse(error) from None
        return wire.wire_dump(
            wire.TurnRevertResult(
                reverted=[str(path) for path in report.reverted],
                skipped=[wire.SkippedPath(path=str(s.path), reason=s.reason) for s in report.skipped],
            )
        )


def list_sessions(listed: list[tuple[WorkspaceHost, list[SessionListing]]], p: wire.SessionListParams
                  ) -> list[wire.SessionInfo]:
    """The sessions listed by these hosts that match the request's filters (text,
    update time), the most recently updated first, at most `limit`."""
    sessions = [
        wire.SessionInfo(
            session_id=s.session_id,
            workspace_uri=host.uri,
            title=s.title,
            created_at=s.created_at,
            updated_at=s.updated_at,
            turns=s.turns,
            status=s.status,
            parent_session_id=s.parent_session_id,
            fork_turn=s.fork_turn,
            usage=s.usage,
            parent_tool_call_id=s.parent_tool_call_id,
            excerpt=s.excerpt,
            problem=s.problem,
        )
        for host, listings in listed
        for s in listings
        if (p.updated_after is None or s.updated_at >= p.updated_after)
        and (p.updated_before is None or s.updated_at < p.updated_before)
    ]
    sessions.sort(key=lambda s: s.updated_at, reverse=True)
    return sessions[: p.limit] if p.limit else sessions


def load_session(ls: AgentLanguageServer, session_id: str) -> dict[str, Any]:
    """The whole log, every event as stored (the answer of agent/session/load)."""
    view = _open_view(ls, session_id)
    try:
        events = [e.to_json() for e in view.log.iter_range(0, len(view.log))]
    except UnreadableEventError:  # a damaged stream chunk line (a load does not read those): read-only from now on
        ls.host_for_session(session_id).mark_damaged(session_id)
        view = _damaged_view(ls.host_for_session(session_id), session_id)
        events = [e.to_json() for e in view.log.iter_range(0, len(view.log))]
    return _answer(
        wire.SessionLoadResult(session_id=session_id, workspace_uri=view.workspace_uri, status=view.status,
                               events=[], inbox=view.inbox, held_by_pid=view.held_by_pid, problem=view.problem),
        events,
    )


def replay_session(ls: AgentLanguageServer, p: wire.SessionReplayParams) -> dict[str, Any]:
    """One page of the log, deltas merged (the answer of agent/session/replay)."""
    view = _open_view(ls, p.session_id)
    try:
        page = _page(view.log, p)
    except UnreadableEventError:  # a damaged stream chunk line (a load does not read those): read-only from now on
        ls.host_for_session(p.session_id).mark_damaged(p.session_id)
        view = _damaged_view(ls.host_for_session(p.session_id), p.session_id)
        page = _page(view.log, p)
    return _answer(
        wire.SessionReplayResult(session_id=p.session_id, workspace_uri=view.workspace_uri, status=view.status,
                                 events=[], start_seq=page.start, next_seq=page.next, end_seq=page.end,
                                 inbox=view.inbox, held_by_pid=view.held_by_pid, problem=view.problem),
        page.events,
    )


def _page(log: EventLog, p: wire.SessionReplayParams) -> Any:
    if p.direction == "forward":
        return page_forward(log, p.seq or 0, p.limit)
    return page_backward(log, p.seq, p.limit)


class _View:
    """What a load or a replay answers from: the session's log and its state."""

    def __init__(self, log: EventLog, workspace_uri: str, status: str, inbox: wire.Inbox, held_by_pid: int | None,
                 problem: str | None = None):
        self.log, self.workspace_uri, self.status, self.inbox, self.held_by_pid, self.problem = (
            log, workspace_uri, status, inbox, held_by_pid, problem)


def _open_view(ls: AgentLanguageServer, session_id: str) -> _View:
    try:
        host, agent = ls.agent_for(session_id)
    except SessionInUse:  # open in another window's server: a read-only snapshot
        return _snapshot_view(ls.host_for_session(session_id), session_id)
    except SessionDamaged as error:  # what comes before the damage, read-only; nothing readable: the error
        return _damaged_view(ls.host_for_session(session_id), session_id, error.message)
    ls.relay.flush_session(agent.session_id)  # the client sees nothing twice out of order
    inbox = wire.Inbox(next_turn=list(agent.inbox.next_turn), next_step=list(agent.inbox.next_step))
    return _View(agent.session.events, host.uri, agent.status, inbox, None)


def _snapshot_view(host: WorkspaceHost, session_id: str) -> _View:
    try:
        snapshot = host.snapshot(session_id)
    except KeyError:
        raise unknown_session(session_id) from None
    inbox = wire.Inbox(next_turn=snapshot.next_turn, next_step=snapshot.next_step)
    return _View(snapshot.events, host.uri, "running" if snapshot.running else "idle", inbox,  # type: ignore[arg-type]
                 snapshot.held_by or 0)


def _damaged_view(host: WorkspaceHost, session_id: str, found: str | None = None) -> _View:
    """What a damaged session shows; `found` says what the load found wrong,
    for damage that is not in a line (a header field out of range)."""
    try:
        snapshot = host.damaged_snapshot(session_id)
    except KeyError:
        raise unknown_session(session_id) from None
    except CorruptSessionError as error:
        raise SessionDamaged(session_id, error) from None
    inbox = wire.Inbox(next_turn=snapshot.next_turn, next_step=snapshot.next_step)
    return _View(snapshot.events, host.uri, "idle", inbox, None, snapshot.problem or found)  # type: ignore[arg-type]


def _answer(result: wire.WireModel, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The result on the wire with its events as they are: they come from the log,
    and validating a long session's events would cost more than the rest."""
    out = wire.wire_dump(result)
    out["events"] = events
    return out


async def compact_session(ls: AgentLanguageServer, session_id: str) -> bool:
    """Compact an idle session now; False if it is running or there was nothing to compact."""
    _, agent = ls.agent_for(session_id)
    from agent_lsp.agent.compaction import CompactionError

    if agent.status != "idle":
        return False
    try:
        outcome = await agent.compact_now()
    except CompactionError as error:
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # $/cancelRequest stopped it: say so
            raise asyncio.CancelledError() from None
        log.info("compaction of %s did not happen: %s", session_id, error)
        return False
    return outcome is not None
