"""agent/subagent/cancel: cancel one running sub-agent alone (its parent's turn
goes on and gets a tool result saying the sub-agent was cancelled)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer, shown
from agent_lsp.lsp.rpc import parse


def register(server: AgentLanguageServer) -> None:
    @server.feature("agent/subagent/cancel")
    async def subagent_cancel(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SubagentCancelParams, params)
        if not p.session_id:
            raise JsonRpcInvalidParams("sessionId: must not be empty")
        for host in ls.live_hosts:
            if p.session_id in host.subagents.running:
                host.subagents.cancel(p.session_id)
                return wire.wire_dump(wire.SubagentCancelResult(cancelled=True))
        raise JsonRpcInvalidParams(f"session {shown(p.session_id)} is not a running sub-agent")
