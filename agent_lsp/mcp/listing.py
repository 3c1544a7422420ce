"""`agent/mcp/list`: the MCP servers of the workspace folders and their state.

Params `{"workspaceUri"?: string}` (one folder; all folders when absent).
Result `{"servers": [{"workspaceUri", "name", "transport", "source", "state",
"toolCount", "tools", "restarts", "reason"?, "protocolVersion"?}]}`; the
states are `starting`, `ready`, `failed`, `stopped` and
`needs-authorization` (a project server not trusted yet, or refused).
The LSP layer registers `mcp_list` as the handler (see docs/protocol.md).
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol


class _Host(Protocol):
    uri: str

    def mcp_status(self) -> list[dict[str, Any]]: ...


def mcp_list(hosts: Iterable[_Host], params: Any = None) -> dict[str, Any]:
    wanted = params.get("workspaceUri") if isinstance(params, dict) else getattr(params, "workspace_uri", None)
    servers: list[dict[str, Any]] = []
    for host in hosts:
        if wanted and host.uri.rstrip("/") != str(wanted).rstrip("/"):
            continue
        servers.extend({"workspaceUri": host.uri, **entry} for entry in host.mcp_status())
    return {"servers": servers}
