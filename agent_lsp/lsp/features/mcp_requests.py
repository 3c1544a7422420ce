"""The MCP requests (see docs/protocol.md, "MCP servers"): agent/mcp/list (the
servers of the workspace folders and their state), agent/mcp/authorize and
agent/mcp/logout (sign a server in again, forget its tokens), agent/mcp/prompts and
agent/mcp/prompt/run (the servers' prompts as commands the user runs). The
`@server:uri` attachments of a followup's text are the application service's
(`agent_lsp.service.messages`)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.messages import message_ref
from agent_lsp.service import Message
from agent_lsp.service.capability_refresh import refresh


async def mcp_list_request(ls: AgentLanguageServer, p: wire.McpListParams) -> wire.McpListResult:
    from agent_lsp.mcp import mcp_list  # with the agent machinery, not at server start

    await ls.ready()
    hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
    for host in hosts:
        refresh(host)
    return wire.McpListResult.model_validate(mcp_list(hosts))


async def mcp_authorize_request(ls: AgentLanguageServer, p: wire.McpServerParams) -> wire.McpServerStatus:
    return await _on_server(ls, p, "authorize")


async def mcp_logout_request(ls: AgentLanguageServer, p: wire.McpServerParams) -> wire.McpServerStatus:
    return await _on_server(ls, p, "sign_out")


async def mcp_prompts_request(ls: AgentLanguageServer, p: wire.McpPromptsParams) -> wire.McpPromptsResult:
    from agent_lsp.mcp.prompts import list_prompts

    await ls.ready()
    hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
    prompts = [
        wire.McpPromptInfo.model_validate({"workspaceUri": host.uri, **prompt})
        for host in hosts for prompt in await list_prompts(host.mcp_manager())
    ]
    return wire.McpPromptsResult(prompts=prompts)


async def mcp_prompt_run_request(ls: AgentLanguageServer, p: wire.McpPromptRunParams) -> wire.MessageRef:
    from agent_lsp.mcp.failure_text import error_text
    from agent_lsp.mcp.prompts import PromptProblem, prompt_text

    await ls.ready()
    host = ls.host_for_session(p.session_id) if p.session_id else ls.host_for_uri(p.workspace_uri)
    try:
        text = await prompt_text(host.mcp_manager(), p.server, p.name, p.arguments)
    except PromptProblem as problem:
        raise JsonRpcInvalidParams(str(problem)) from None
    except Exception as error:  # the server failed the prompts/get
        raise JsonRpcInvalidParams(
            f"name: MCP server {p.server!r} could not give the prompt {p.name!r}: {error_text(error)}"
        ) from None
    return message_ref(await ls.service.followup(Message(text), session_id=p.session_id or None,
                                                 workspace_uri=p.workspace_uri, mentions=False))


async def _on_server(ls: AgentLanguageServer, p: wire.McpServerParams, action: str) -> wire.McpServerStatus:
    """Authorize or sign out of one server (McpManager.authorize / sign_out); its status after."""
    await ls.ready()
    host = _host_with(ls, p)
    try:
        await getattr(host.mcp_manager(), action)(p.server)
    except ValueError as error:
        raise JsonRpcInvalidParams(f"server: {error}") from None
    return _status(host, p.server)


def _host_with(ls: AgentLanguageServer, p: wire.McpServerParams) -> Any:
    """The host of `workspaceUri`, or the first that has the server; invalid params when none has it."""
    hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
    for host in hosts:
        refresh(host)
        if p.server in host.mcp_manager().connections:
            return host
    raise JsonRpcInvalidParams(f"server: no MCP server named {p.server!r}" + (" in that folder" if p.workspace_uri else ""))


def _status(host: Any, name: str) -> wire.McpServerStatus:
    from agent_lsp.mcp import mcp_list

    entry = next(e for e in mcp_list([host])["servers"] if e["name"] == name)
    return wire.McpServerStatus.model_validate(entry)


REQUESTS = {
    "agent/mcp/list": mcp_list_request,
    "agent/mcp/authorize": mcp_authorize_request,
    "agent/mcp/logout": mcp_logout_request,
    "agent/mcp/prompts": mcp_prompts_request,
    "agent/mcp/prompt/run": mcp_prompt_run_request,
}
