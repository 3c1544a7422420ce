"""Requests to a session's agent: agent/followup, agent/steer, agent/cancel,
agent/inbox/remove. Each is one call of the application service
(`agent_lsp.service`) and answers at once; the turn runs on and streams
(`agent_lsp.lsp.relay`)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.messages import message, message_ref
from agent_lsp.lsp.rpc import parse
from agent_lsp.service import ImageProblem


def register(server: AgentLanguageServer) -> None:
    @server.feature("agent/followup")
    async def followup(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.FollowupParams, params)
        await ls.ready()
        try:
            return message_ref(await ls.service.followup(message(p.content, p.context), session_id=p.session_id or None,
                                                         workspace_uri=p.workspace_uri))
        except ImageProblem as problem:
            raise JsonRpcInvalidParams(str(problem)) from None

    @server.feature("agent/steer")
    async def steer(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SteerParams, params)
        await ls.ready()
        try:
            return message_ref(await ls.service.steer(message(p.content, p.context), session_id=p.session_id))
        except ImageProblem as problem:
            raise JsonRpcInvalidParams(str(problem)) from None

    # Not a coroutine: pygls runs it and answers as the message is read, not a
    # loop turn or two later (a turn is long while sessions stream).
    @server.feature("agent/cancel")
    def cancel(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.CancelParams, params)
        ls.service.cancel(p.session_id, keep_inbox=p.keep_inbox)
        return {}

    @server.feature("agent/inbox/remove")
    async def inbox_remove(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.InboxRemoveParams, params)
        return wire.wire_dump(wire.InboxRemoveResult(removed=ls.service.remove_queued(p.session_id, p.message_id)))
