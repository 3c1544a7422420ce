"""`agent-lsp acp`: serve ACP on stdin/stdout until the client closes it."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from typing import Any

import acp

from agent_lsp.acp.face import AcpAgent
from agent_lsp.acp.transport import READ_LIMIT, StdioTransport
from agent_lsp.config.layers import SettingsLayers

log = logging.getLogger(__name__)


def serve_stdio(settings: dict[str, Any] | None = None) -> int:
    """Serve one ACP client on stdio. `settings` (the `agentLsp` settings
    object, e.g. from `--settings`) go over the config file and environment,
    as initializationOptions do for the LSP face."""
    problem = _stdin_problem()
    if problem:
        print(f"agent-lsp acp: {problem}", file=sys.stderr)
        return 2
    layers = SettingsLayers()
    for problem in layers.problems + layers.set_layer("initializationOptions", settings or {}, source="--settings"):
        log.warning("%s", problem)
    return asyncio.run(_serve(AcpAgent(layers)))


def _stdin_problem() -> str | None:
    """Why stdin cannot carry ACP, or None. The library reads stdin with the event
    loop, which cannot watch a file or /dev/null: it would wait for ever."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return "stdin is closed; an ACP client runs this command with pipes"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or sys.stdin.isatty():
        return None
    return "stdin is a file, not a pipe; an ACP client runs this command with pipes (stdin and stdout)"


async def _serve(agent: AcpAgent) -> int:
    try:
        reader, writer = await acp.stdio_streams(limit=READ_LIMIT)
        await acp.run_agent(agent, StdioTransport(reader, writer))
    finally:
        await agent.close()
    return 0


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, settings: dict[str, Any] | None,
                           env: Any, window: str) -> None:
    """One ACP client among the agent host's connections: its own settings
    (`--settings` of its `agent-lsp acp`) and environment."""
    layers = SettingsLayers(env)
    for problem in layers.problems + layers.set_layer("initializationOptions", settings or {}, source="--settings"):
        log.warning("%s", problem)
    agent = AcpAgent(layers, env=env, window=window)
    try:
        await acp.run_agent(agent, StdioTransport(reader, writer))
    finally:
        await agent.close()
