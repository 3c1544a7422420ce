"""agent/mcp/list: the MCP servers of the workspace folders and their state
(see docs/protocol.md, "MCP servers")."""

from __future__ import annotations

from typing import Any

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.features.watched_files import refresh
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.rpc import parse


def register(server: AgentLanguageServer) -> None:
    @server.feature("agent/mcp/list")
    async def mcp_list_request(ls: AgentLanguageServer, params: Any) -> dict:
        from agent_lsp.mcp import mcp_list  # with the agent machinery, not at server start

        p = parse(wire.McpListParams, params)
        await ls.ready()
        hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
        for host in hosts:
            refresh(host)
        return wire.wire_dump(wire.McpListResult.model_validate(mcp_list(hosts)))
