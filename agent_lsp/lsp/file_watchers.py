"""Asking the client, once initialized, to watch the files capabilities are read
from (skills, rules, agent types, project hooks, `.mcp.json`), if it can
register watchers; its notifications are `lsp/features/watched_files.py`'s."""

from __future__ import annotations

import logging

from lsprotocol import types

from agent_lsp.lsp.language_server import AgentLanguageServer

log = logging.getLogger(__name__)

REGISTRATION_ID = "agent-lsp-capability-files"
WATCHED_GLOBS = ("**/.mcp.json", "**/.agents/**", "**/.claude/**")


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

