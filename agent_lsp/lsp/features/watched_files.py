"""Capability files re-read on change: `workspace/didChangeWatchedFiles`.

When the client can register file watchers dynamically, the server asks it
(once initialized, `agent_lsp.lsp.file_watchers`) to watch the files skills,
rules, agent types, project hooks and MCP servers are read from; each
notification makes every folder compare those files with what it read
(`WorkspaceHost.refresh_capabilities`), so a saved `.mcp.json` restarts its
changed servers at once. The same check runs at the start of every turn and
before the skill and MCP lists are answered: clients that cannot watch
files, and files outside the workspace (the user's skills and agent types),
are covered by it. It costs a few `stat` calls; the rule is the application
service's (`agent_lsp.service.capability_refresh`).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.service.capability_refresh import refresh


def register(server: AgentLanguageServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_watched_files(ls: AgentLanguageServer, params: Any) -> None:
        for host in ls.live_hosts:  # a host not built yet reads everything when it is
            refresh(host)
