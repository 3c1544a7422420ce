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
from agent_lsp.lsp.dispatch import WithEvents
from agent_lsp.lsp.rpc import SessionDamaged, SessionInUse
from agent_lsp.service.session_list import list_sessions
from agent_lsp.service.worktree_sessions import WorktreeProblem
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.event_log import EventLog, UnreadableEventError
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.store.replay import page_backward, page_forward
from agent_lsp.workspace.session_titles import TitleError

if TYPE_CHECKING:
    from agent_lsp.workspace.host import WorkspaceHost

log = logging.getLogger(__name__)


async def session_new(ls: AgentLanguageServer, p: wire.SessionNewParams) -> wire.SessionRef:
    await ls.ready()
    host = ls.host_for_uri(p.workspace_uri)
    if not p.worktree:
        return wire.SessionRef(session_id=host.new_session(title=p.title).session_id)
    base = p.worktree.base if isinstance(p.worktree, wire.WorktreeRequest) else None
    try:
        agent = await ls.worktrees.new_session(host.root, base=base, title=p.title)
    except WorktreeProblem as error:
        raise JsonRpcInvalidParams(f"worktree: {error}") from None
    return wire.SessionRef(session_id=agent.session_id)


async def session_list(ls: AgentLanguageServer, p: wire.SessionListParams) -> wire.SessionListResult:
    await ls.ready()
    hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
    return wire.SessionListResult(sessions=await list_sessions(
        hosts, query=p.query, updated_after=p.updated_after, updated_before=p.updated_before, limit=p.limit,
        worktrees=ls.worktrees))


async def session_load(ls: AgentLanguageServer, p: wire.SessionRef) -> WithEvents:
    await ls.ready()
    answer = load_session(ls, p.session_id)
    if answer.result.problem:
        ls.show(f"agent-lsp: {answer.result.problem}; showing what comes before it, read-only", types.MessageType.Warning)
    recovered = ls.host_for_session(p.session_id).take_recovered(p.session_id)  # a revert a crash interrupted
    if recovered:
        ls.show(f"agent-lsp: {recovered}", types.MessageType.Warning)
    return answer


async def session_replay(ls: AgentLanguageServer, p: wire.SessionReplayParams) -> WithEvents:
    await ls.ready()
    return replay_session(ls, p)


async def session_delete(ls: AgentLanguageServer, p: wire.SessionDeleteParams) -> wire.SessionDeleteResult:
    try:
        host = ls.host_for_session(p.session_id)
    except JsonRpcInvalidParams:
        return wire.SessionDeleteResult(deleted=False)
    try:
        deleted = await ls.worktrees.delete_session(host, p.session_id, main_roots=list(ls.folders), force=p.force)
    except SessionLockedError as error:
        raise SessionInUse(error) from None
    except WorktreeProblem as error:
        raise JsonRpcInvalidParams(str(error)) from None
    return wire.SessionDeleteResult(deleted=deleted)


async def session_rename(ls: AgentLanguageServer, p: wire.SessionRenameParams) -> wire.SessionRenameResult:
    await ls.ready()
    host, agent = ls.agent_for(p.session_id)
    try:
        title = host.titles.rename(agent, p.title)
    except TitleError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    return wire.SessionRenameResult(title=title)


async def session_compact(ls: AgentLanguageServer, p: wire.SessionRef) -> wire.SessionCompactResult:
    return wire.SessionCompactResult(compacted=await compact_session(ls, p.session_id))


async def turn_revert(ls: AgentLanguageServer, p: wire.TurnRevertParams) -> wire.TurnRevertResult:
    host = ls.host_for_session(p.session_id)
    try:
        report = await host.revert_turn(p.session_id, p.turn)
    except SessionLockedError as error:
        raise SessionInUse(error) from None
    return wire.TurnRevertResult(
        reverted=[str(path) for path in report.reverted],
        skipped=[wire.SkippedPath(path=str(s.path), reason=s.reason) for s in report.skipped],
    )


REQUESTS = {
    "agent/session/new": session_new,
    "agent/session/list": session_list,
    "agent/session/load": session_load,
    "agent/session/replay": session_replay,
    "agent/session/delete": session_delete,
    "agent/session/rename": session_rename,
    "agent/session/compact": session_compact,
    "agent/turn/revert": turn_revert,
}


def load_session(ls: AgentLanguageServer, session_id: str) -> WithEvents:
    """The whole log, every event as stored (the answer of agent/session/load)."""
    view = _open_view(ls, session_id)
    try:
        events = [e.to_json() for e in view.log.iter_range(0, len(view.log))]
    except UnreadableEventError:  # a damaged stream chunk line (a load does not read those): read-only from now on
        ls.host_for_session(session_id).mark_damaged(session_id)
        view = _damaged_view(ls.host_for_session(session_id), session_id)
        events = [e.to_json() for e in view.log.iter_range(0, len(view.log))]
    return WithEvents(
        wire.SessionLoadResult(session_id=session_id, workspace_uri=view.workspace_uri, status=view.status,
                               events=[], inbox=view.inbox, held_by_pid=view.held_by_pid, problem=view.problem),
        events,
    )


def replay_session(ls: AgentLanguageServer, p: wire.SessionReplayParams) -> WithEvents:
    """One page of the log, deltas merged (the answer of agent/session/replay)."""
    view = _open_view(ls, p.session_id)
    try:
        page = _page(view.log, p)
    except UnreadableEventError:  # a damaged stream chunk line (a load does not read those): read-only from now on
        ls.host_for_session(p.session_id).mark_damaged(p.session_id)
        view = _damaged_view(ls.host_for_session(p.session_id), p.session_id)
        page = _page(view.log, p)
    return WithEvents(
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
