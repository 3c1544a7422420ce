"""Requests to a session's agent: agent/followup, agent/steer, agent/cancel,
agent/inbox/remove. Each answers at once; the turn runs on and streams
(`agent_lsp.lsp.relay`)."""

from __future__ import annotations

import asyncio
import uuid

from typing import Any

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.features.mcp_requests import with_resource_attachments
from agent_lsp.lsp.features.watched_files import refresh
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.rpc import parse


def register(server: AgentLanguageServer) -> None:
    @server.feature("agent/followup")
    async def followup(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.FollowupParams, params)
        await ls.ready()
        context = await with_resource_attachments(ls, p)
        return wire.wire_dump(start_followup(ls, p.session_id, p.workspace_uri, p.content, context))

    @server.feature("agent/steer")
    async def steer(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SteerParams, params)
        await ls.ready()
        _, agent = ls.agent_for(p.session_id)
        message = agent.steer(content_value(p.content), context=context_dicts(p.context))
        return wire.wire_dump(wire.MessageRef(session_id=agent.session_id, message_id=message["id"]))

    # Not a coroutine: pygls runs it and answers as the message is read, not a
    # loop turn or two later (a turn is long while sessions stream).
    @server.feature("agent/cancel")
    def cancel(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.CancelParams, params)
        _, agent = ls.agent_for(p.session_id)
        agent.cancel("user", keep_inbox=p.keep_inbox)
        return {}

    @server.feature("agent/inbox/remove")
    async def inbox_remove(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.InboxRemoveParams, params)
        _, agent = ls.agent_for(p.session_id)
        return wire.wire_dump(wire.InboxRemoveResult(removed=agent.remove(p.message_id)))


def start_followup(
    ls: AgentLanguageServer,
    session_id: str | None,
    workspace_uri: str | None,
    content: wire.Content,
    context: list[wire.ContextItem] | None,
    *,
    use_current: bool = False,
    after_s: float = 0.0,
) -> wire.MessageRef:
    """Queue a followup; no session: the workspace's current one (commands) or a new one.
    `after_s`: queue it that much later (the answer goes out first)."""
    if session_id:
        refresh(ls.host_for_session(session_id))  # a turn starts: capability files changed since are read
        _, agent = ls.agent_for(session_id)
    else:
        host = ls.host_for_uri(workspace_uri)
        refresh(host)
        agent = host.current() if use_current else host.new_session()
    if after_s > 0:
        message_id = f"msg_{uuid.uuid4().hex[:12]}"
        asyncio.get_running_loop().call_later(
            after_s, lambda: agent.followup(content_value(content), id=message_id, context=context_dicts(context)))
        return wire.MessageRef(session_id=agent.session_id, message_id=message_id)
    message = agent.followup(content_value(content), context=context_dicts(context))
    return wire.MessageRef(session_id=agent.session_id, message_id=message["id"])


def context_dicts(items: list[wire.ContextItem] | None) -> list[dict[str, Any]] | None:
    return [wire.wire_dump(item) for item in items] if items else None


def content_value(content: wire.Content) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else [wire.wire_dump(block) for block in content]
