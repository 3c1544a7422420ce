"""Requests that steer a session's history and queue: agent/session/rewind,
agent/session/fork, agent/inbox/update, agent/inbox/move, agent/inbox/pause.
Each is a durable event in the session log (a `session/rewind`, a fork's
header, inbox splices, `agent/inbox/paused`), so replay shows it."""

from __future__ import annotations


from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.agent.inbox import NEXT_STEP, NEXT_TURN
from agent_lsp.agent.rewind import RewindError
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.messages import content_value
from agent_lsp.lsp.rpc import SessionInUse
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.workspace.session_family import ForkError


async def session_rewind(ls: AgentLanguageServer, p: wire.SessionRewindParams) -> wire.SessionRewindResult:
    await ls.ready()
    host, _ = ls.agent_for(p.session_id)
    try:
        outcome = await host.rewind_session(p.session_id, p.turn, revert_files=p.revert_files)
    except RewindError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    except SessionLockedError as error:
        raise SessionInUse(error) from None
    return wire.SessionRewindResult(
        removed_messages=outcome.removed_messages,
        reverts=[
            wire.TurnRevertReport(turn=turn, reverted=[str(p) for p in report.reverted],
                                  skipped=[wire.SkippedPath(path=str(s.path), reason=s.reason) for s in report.skipped])
            for turn, report in outcome.reverts
        ],
    )


async def session_fork(ls: AgentLanguageServer, p: wire.SessionForkParams) -> wire.SessionRef:
    await ls.ready()
    host = ls.host_for_session(p.session_id)
    try:
        agent = host.fork_session(p.session_id, p.turn)
    except ForkError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    return wire.SessionRef(session_id=agent.session_id)


async def inbox_update(ls: AgentLanguageServer, p: wire.InboxUpdateParams) -> wire.InboxUpdateResult:
    _, agent = ls.agent_for(p.session_id)
    updated = agent.inbox.update(p.message_id, content_value(p.content))
    return wire.InboxUpdateResult(updated=updated is not None)


async def inbox_move(ls: AgentLanguageServer, p: wire.InboxMoveParams) -> wire.InboxMoveResult:
    _, agent = ls.agent_for(p.session_id)
    inbox = agent.inbox
    if p.to == "now":
        if inbox.paused:
            raise JsonRpcInvalidParams("the queue is paused: resume it (agent/inbox/pause) to send a message now")
        if not inbox.move(p.message_id, NEXT_TURN, 0):
            return wire.InboxMoveResult(moved=False)
        agent.cancel("user", keep_inbox=True)  # the running turn ends; this message's turn starts next
    elif not inbox.move(p.message_id, NEXT_STEP if p.to == "next-step" else NEXT_TURN, p.index):
        return wire.InboxMoveResult(moved=False)
    agent.wake()  # idle: start the turn a steer or a sent-now message asks for
    return wire.InboxMoveResult(moved=True)


async def inbox_pause(ls: AgentLanguageServer, p: wire.InboxPauseParams) -> wire.InboxPauseResult:
    _, agent = ls.agent_for(p.session_id)
    agent.inbox.set_paused(p.paused)
    if not p.paused:
        agent.wake()  # resumed: the first queued message starts now if idle
    return wire.InboxPauseResult(paused=agent.inbox.paused)


REQUESTS = {
    "agent/session/rewind": session_rewind,
    "agent/session/fork": session_fork,
    "agent/inbox/update": inbox_update,
    "agent/inbox/move": inbox_move,
    "agent/inbox/pause": inbox_pause,
}
