"""Capability files re-read on change: `workspace/didChangeWatchedFiles`.

When the client can register file watchers dynamically, the server asks it
(once initialized) to watch the files skills, rules, agent types, project
hooks and MCP servers are read from; each notification makes every folder
compare those files with what it read (`WorkspaceHost.refresh_capabilities`),
so a saved `.mcp.json` restarts its changed servers at once. The same check
runs at the start of every turn and before the skill and MCP lists are
answered: clients that cannot watch files, and files outside the workspace
(the user's skills and agent types), are covered by it. It costs a few
`stat` calls; the rule is the application service's
(`agent_lsp.service.capability_refresh`).
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.service.capability_refresh import refresh

log = logging.getLogger(__name__)

REGISTRATION_ID = "agent-lsp-capability-files"
WATCHED_GLOBS = ("**/.mcp.json", "**/.agents/**", "**/.claude/**")


def register(server: AgentLanguageServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_watched_files(ls: AgentLanguageServer, params: Any) -> None:
        for host in ls.live_hosts:  # a host not built yet reads everything when it is
            refresh(host)


async def watch_capability_files(ls: AgentLanguageServer) -> None:
    """Ask the client to watch the capability files, if it can register watchers."""
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED_GLOBS]
    )
    registration = types.Registration(
        id=REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await ls.protocol.send_request_async(
            types.CLIENT_REGISTER_CAPABILITY, types.RegistrationParams(registrations=[registration])
        )
    except Exception as error:  # the turn-start check still covers this client
        log.warning("client/registerCapability for file watchers failed: %s", error)

