"""agent/model/info: which model a folder's sessions use and why, before any
turn runs, so a client can say that no model is configured (the built-in
scripted demo model answers) and offer to set one up."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.config import model_environment
from agent_lsp.llm.factory import chosen_model
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.rpc import parse


def register(server: AgentLanguageServer) -> None:
    @server.feature("agent/model/info")
    async def model_info(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.ModelInfoParams, params)
        await ls.ready()
        host = ls.host_for_uri(p.workspace_uri)
        try:
            provider, model, why = chosen_model(host.settings.model, model_environment(host.env))
        except ValueError as e:
            raise JsonRpcInvalidParams(str(e)) from None
        return wire.wire_dump(wire.ModelInfoResult(
            provider=provider, model=model, reason=why, demo=provider == "scripted" and why.startswith("auto")))
