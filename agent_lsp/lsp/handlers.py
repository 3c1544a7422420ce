"""Handler registration: `create_server()` builds the server and lets each
feature module register its handlers. The entry points that run it are in
`agent_lsp.lsp.server`."""

from __future__ import annotations

import logging
import os
from typing import Callable, Mapping

from agent_lsp.lsp.features import agent_requests, code_actions, commands, documents, lifecycle, session_requests
from agent_lsp.lsp.language_server import AgentLanguageServer

FEATURES = (lifecycle, documents, agent_requests, session_requests, commands, code_actions)


def create_server(env: Mapping[str, str] = os.environ, *, after_warm_up: Callable[[], None] = lambda: None) -> AgentLanguageServer:
    """A server with every feature registered, not yet started. `after_warm_up`
    runs once the agent code has loaded in the background (the CLI trims memory then)."""
    # pygls logs every outgoing message at INFO: keep it quiet unless debugging.
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("pygls").setLevel(logging.WARNING)
    server = AgentLanguageServer(env, after_warm_up=after_warm_up)
    for feature in FEATURES:
        feature.register(server)
    return server
