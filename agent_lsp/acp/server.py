"""`agent-lsp acp`: serve ACP on stdin/stdout until the client closes it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import acp

from agent_lsp.acp.face import AcpAgent
from agent_lsp.config import SettingsLayers

log = logging.getLogger(__name__)


def serve_stdio(settings: dict[str, Any] | None = None) -> int:
    """Serve one ACP client on stdio. `settings` (the `agentLsp` settings
    object, e.g. from `--settings`) go over the config file and environment,
    as initializationOptions do for the LSP face."""
    layers = SettingsLayers()
    for problem in layers.problems + layers.set_layer("initializationOptions", settings or {}, source="--settings"):
        log.warning("%s", problem)
    return asyncio.run(_serve(AcpAgent(layers)))


async def _serve(agent: AcpAgent) -> int:
    try:
        await acp.run_agent(agent)
    finally:
        await agent.close()
    return 0
