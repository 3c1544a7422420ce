"""MCP servers the client passes in `session/new` / `session/load`, for that session.

ACP clients hand the agent the MCP servers of the user's editor
configuration (`mcpServers`: stdio `{name, command, args, env}`, Streamable
HTTP `{type: "http", name, url, headers}`). They come from the user, not from
the project, so they start without the trust question `.mcp.json` servers
get (source `editor`, as for servers in an LSP client's settings).

Each session with client servers has its own `McpManager` whose tools go
into a registry of the session's own. The session's agent sees the folder's
tools and those (`SessionTools`; a client server named like one of the
folder's wins); its first request waits, bounded as for the folder's
servers, until they are ready. The servers stop when the session is loaded
again with other servers and when the process ends; a rebuilt agent of the
session (after a settings change) gets the same tools.

SSE servers are refused with a readable error: the MCP layer speaks stdio
and Streamable HTTP only, and `initialize` says so (`mcpCapabilities.sse`
false).
"""

from __future__ import annotations

from typing import Any, Callable

from agent_lsp.agent import Agent, ToolRegistry
from agent_lsp.mcp import McpManager, ServerConfig
from agent_lsp.mcp.config import NAME_PATTERN
from agent_lsp.workspace.host import WorkspaceHost


class ClientServerError(ValueError):
    """A client-passed server that cannot be used; the message names it."""


def client_servers(mcp_servers: list[Any] | None) -> list[ServerConfig]:
    """ACP `McpServer`s as server configurations; ClientServerError for one that cannot run."""
    configs: dict[str, ServerConfig] = {}
    for server in mcp_servers or ():
        name = getattr(server, "name", "")
        if not NAME_PATTERN.match(name or ""):
            raise ClientServerError(f"MCP server {name!r}: the name may use only letters, digits, '_', '-' and '.' "
                                    "(at most 48)")
        kind = getattr(server, "type", None)
        if kind == "http":
            headers = {h.name: h.value for h in server.headers}
            configs[name] = ServerConfig(name, "http", "editor", url=server.url, headers=headers, shown=server.url)
        elif kind is None and getattr(server, "command", None):
            env = {v.name: v.value for v in server.env}
            configs[name] = ServerConfig(name, "stdio", "editor", command=server.command, args=tuple(server.args),
                                         env=env, shown=" ".join([server.command, *server.args]))
        else:
            raise ClientServerError(f"MCP server {name!r}: the {kind or 'given'} transport is not supported "
                                    "(mcpCapabilities: stdio and http only)")
    return list(configs.values())


class SessionTools(ToolRegistry):
    """The folder's registry and the session's own tools, seen as one; the own ones win."""

    def __init__(self, shared: ToolRegistry, own: ToolRegistry):
        self.shared = shared
        self.own = own
        self._specs = {}

    @property  # type: ignore[override]
    def _tools(self) -> dict[str, Any]:
        return {**self.shared._tools, **self.own._tools}

    def add(self, tool: Any) -> None:
        self.own.add(tool)

    def remove(self, name: str) -> bool:
        return self.own.remove(name)


class ClientMcp:
    """One session's client-passed servers."""

    def __init__(self, host: WorkspaceHost, servers: list[ServerConfig], editor: Any):
        self.servers = servers
        self.tools = ToolRegistry()
        mcp = host.settings.mcp
        self.manager = McpManager(
            servers, root=host.root, editor=editor, policy=host.policy, registry=self.tools,
            tool_timeout_s=mcp.tool_timeout_seconds, connect_timeout_s=mcp.connect_timeout_seconds,
            max_output_chars=mcp.max_output_chars, first_step_wait_s=mcp.first_step_wait_seconds,
            elicitation_timeout_s=mcp.elicitation_timeout_seconds,
        )

    def attach(self, agent: Agent) -> None:
        """Offer the servers' tools to `agent` (the session's agent, new or rebuilt)."""
        shared = agent.tools.shared if isinstance(agent.tools, SessionTools) else agent.tools
        tools = SessionTools(shared, self.tools)
        agent.tools = tools
        agent.loop.tools = tools  # the turn loop keeps the registry it was built with
        self.manager.start()
        waited = False

        async def assemble(payload: dict, next_: Callable) -> dict:
            nonlocal waited
            if not waited:
                waited = True
                await self.manager.wait_for_first_step()
                payload = {**payload, "tools": agent.tools.specs()}
            return await next_(payload)

        agent.hooks.register("system-prompt/assemble", assemble)

    async def stop(self, agent: Agent | None = None) -> None:
        """Stop the servers; `agent` (when given) is left with the folder's tools only."""
        await self.manager.stop()
        if agent is not None and isinstance(agent.tools, SessionTools):
            agent.tools = agent.loop.tools = agent.tools.shared
