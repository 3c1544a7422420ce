"""Handler registration: `create_server()` builds the server, registers the
custom requests of the method table (`protocol.CLIENT_REQUESTS`) from the
feature modules' `REQUESTS` (`agent_lsp.lsp.dispatch`: it refuses a method
with no handler or a handler of no method) and lets the feature modules with
LSP features or commands register those. The entry points that run it are in
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
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.dispatch import merged, serve_requests, shared_handlers
from agent_lsp.lsp.language_server import AgentLanguageServer, ProcessPort
from agent_lsp.lsp.rpc import quiet_refusals
from agent_lsp.service.requests import SHARED_REQUESTS

# The feature modules with LSP features or commands (`register(server)`), in the order pygls lists the commands.
FEATURES = (lifecycle, documents, skill_requests, review_requests, commands, code_actions, watched_files)
# The handlers of the method table's requests, by feature.
REQUESTS = (agent_requests.REQUESTS, session_requests.REQUESTS, session_files.REQUESTS, session_control.REQUESTS, mcp_requests.REQUESTS,
            language_requests.REQUESTS, subagent_requests.REQUESTS, mode_requests.REQUESTS, skill_requests.REQUESTS,
            permission_requests.REQUESTS, model_requests.REQUESTS, review_requests.REQUESTS,
            shared_handlers(SHARED_REQUESTS))


def create_server(env: Mapping[str, str] = os.environ, *, process: ProcessPort | None = None) -> AgentLanguageServer:
    """A server with every feature registered, not yet started; `process` is told
    of the moments the process around it acts on (the CLI's)."""
    # pygls logs every outgoing message at INFO: keep it quiet unless debugging.
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("pygls").setLevel(logging.WARNING)
    quiet_refusals()
    server = AgentLanguageServer(env, process=process)
    serve_requests(server, wire.CLIENT_REQUESTS, merged(REQUESTS))
    for feature in FEATURES:
        feature.register(server)
    return server
