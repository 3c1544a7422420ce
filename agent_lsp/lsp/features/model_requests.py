"""agent/model/check: one tiny real request to a workspace's configured model
(`agent_lsp.llm.check`), for an editor's "check model connection"."""

from __future__ import annotations

from typing import Any

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.rpc import parse


def register(server: AgentLanguageServer) -> None:
    @server.feature("agent/model/check")
    async def model_check_request(ls: AgentLanguageServer, params: Any) -> dict:
        from agent_lsp.llm.check import check_model  # with the providers, not at server start

        p = parse(wire.ModelCheckParams, params)
        await ls.ready()
        host = ls.host_for_uri(p.workspace_uri)
        try:
            resolved = host.resolve_model()
        except ValueError as error:  # an unusable configuration: say which, as a result
            return wire.wire_dump(wire.ModelCheckResult(ok=False, error=wire.events.LlmFailure(code="BAD_REQUEST", message=str(error))))
        return wire.wire_dump(wire.ModelCheckResult.model_validate(await check_model(resolved)))
