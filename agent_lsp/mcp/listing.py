"""`agent/mcp/list`: the MCP servers of some workspace folders and their state.

Each entry: `{"workspaceUri", "name", "transport"?, "source", "state",
"toolCount", "tools", "restarts", "reason"?, "protocolVersion"?,
"authorization"?, "signedIn"?}`; the
states are `stopped`, `starting`, `ready`, `failed` and
`needs-authorization` (a project server not trusted yet, or refused; an
HTTP server waiting for an OAuth sign-in), with `authorization` and
`signedIn` saying what `agent/mcp/authorize` would do. The
LSP layer's handler (agent_lsp/lsp/features/mcp_requests.py) picks the
folders; docs/protocol.md has the wire shape.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol


class _Host(Protocol):
    uri: str

    def mcp_status(self) -> list[dict[str, Any]]: ...


def mcp_list(hosts: Iterable[_Host]) -> dict[str, Any]:
    return {"servers": [{"workspaceUri": host.uri, **entry} for host in hosts for entry in host.mcp_status()]}
