"""Requests to a session's agent: agent/followup, agent/steer, agent/cancel,
agent/inbox/remove. Each is one call of the application service
(`agent_lsp.service`) and answers at once; the turn runs on and streams
(`agent_lsp.lsp.relay`)."""

from __future__ import annotations

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.messages import message, message_ref
from agent_lsp.service import ImageProblem


async def followup(ls: AgentLanguageServer, p: wire.FollowupParams) -> wire.MessageRef:
    await ls.ready()
    try:
        return message_ref(await ls.service.followup(message(p.content, p.context), session_id=p.session_id or None,
                                                     workspace_uri=p.workspace_uri))
    except ImageProblem as problem:  # not an image, too large, a model without images: nothing queued
        raise JsonRpcInvalidParams(str(problem)) from None


async def steer(ls: AgentLanguageServer, p: wire.SteerParams) -> wire.MessageRef:
    await ls.ready()
    try:
        return message_ref(await ls.service.steer(message(p.content, p.context), session_id=p.session_id))
    except ImageProblem as problem:
        raise JsonRpcInvalidParams(str(problem)) from None


# Not a coroutine: pygls runs it and answers as the message is read, not a
# loop turn or two later (a turn is long while sessions stream).
def cancel(ls: AgentLanguageServer, p: wire.CancelParams) -> wire.Empty:
    ls.service.cancel(p.session_id, keep_inbox=p.keep_inbox)
    return wire.Empty()


async def inbox_remove(ls: AgentLanguageServer, p: wire.InboxRemoveParams) -> wire.InboxRemoveResult:
    return wire.InboxRemoveResult(removed=ls.service.remove_queued(p.session_id, p.message_id))


REQUESTS = {
    "agent/followup": followup,
    "agent/steer": steer,
    "agent/cancel": cancel,
    "agent/inbox/remove": inbox_remove,
}
