"""agent/subagent/cancel: cancel one running sub-agent alone (its parent's turn
goes on and gets a tool result saying the sub-agent was cancelled)."""

from __future__ import annotations


from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer, shown


async def subagent_cancel(ls: AgentLanguageServer, p: wire.SubagentCancelParams) -> wire.SubagentCancelResult:
    if not p.session_id:
        raise JsonRpcInvalidParams("sessionId: must not be empty")
    if any(host.subagents.cancel(p.session_id) for host in ls.live_hosts):
        return wire.SubagentCancelResult(cancelled=True)
    raise JsonRpcInvalidParams(f"session {shown(p.session_id)} is not a running sub-agent")


REQUESTS = {
    "agent/subagent/cancel": subagent_cancel,
}
