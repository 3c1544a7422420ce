"""Handler registration: `create_server()` builds the server and lets each
feature module register its handlers. The entry points that run it are in
`agent_lsp.lsp.server`."""

from __future__ import annotations

import logging
import os
from typing import Mapping

from agent_lsp.lsp.features import (
    agent_requests,
    code_actions,
    commands,
    documents,
    lifecycle,
    language_requests,
    mcp_requests,
    mode_requests,
    model_requests,
    permission_requests,
    review_requests,
    session_control,
    session_files,
    session_requests,
    subagent_requests,
    skill_requests,
    watched_files,
)
from agent_lsp.lsp.language_server import AgentLanguageServer, ProcessPort
from agent_lsp.lsp.rpc import quiet_refusals

FEATURES = (lifecycle, documents, agent_requests, session_requests, session_files, session_control, mcp_requests, language_requests,
            subagent_requests,
            mode_requests, skill_requests, permission_requests, model_requests, review_requests, commands,
            code_actions, watched_files)


def create_server(env: Mapping[str, str] = os.environ, *, process: ProcessPort | None = None) -> AgentLanguageServer:
    """A server with every feature registered, not yet started; `process` is told
    of the moments the process around it acts on (the CLI's)."""
    # pygls logs every outgoing message at INFO: keep it quiet unless debugging.
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("pygls").setLevel(logging.WARNING)
    quiet_refusals()
    server = AgentLanguageServer(env, process=process)
    for feature in FEATURES:
        feature.register(server)
    return server
