"""`agentLsp.review.resolve`: the resolve of the agent's edits that wait for the
user ("edits.review": "review", `agent_lsp.workspace.edit_review`) as a
command, for the code actions of editors without a plugin. The requests
agent/review/list and agent/review/resolve are served by both faces from the
shared table (`agent_lsp.service.requests`)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import capabilities
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.rpc import parse
from agent_lsp.service.requests import InvalidParams

REQUESTS: dict[str, Any] = {}  # agent/review/*: the shared table's


def register(server: AgentLanguageServer) -> None:
    @server.command(capabilities.REVIEW_RESOLVE)
    async def cmd_review_resolve(ls: AgentLanguageServer, *args: Any) -> dict:
        if len(args) != 1:
            raise JsonRpcInvalidParams("arguments: expected one argument, {sessionId, action, hunkId? | uri? | all?}")
        await ls.ready()
        try:
            result = await ls.service.review_resolve(parse(wire.ReviewResolveParams, args[0]))
        except InvalidParams as error:
            raise JsonRpcInvalidParams(str(error)) from None
        return wire.wire_dump(result)
