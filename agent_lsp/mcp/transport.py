"""The transport of one MCP server connection: Streamable HTTP with the
configured headers (and OAuth), or stdio through `launcher.py` (so the server
dies with us); either way watched, so that the end of the server's side is seen."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio

from agent_lsp.mcp.config import ServerConfig
from agent_lsp.mcp.failure_text import ServerUnavailable
from agent_lsp.mcp.http_cap import cap_responses
from agent_lsp.mcp.oauth import OAuthSignIn
from agent_lsp.mcp.sandboxed import sandboxed_command
from agent_lsp.sandbox import SandboxPolicy

log = logging.getLogger(__name__)


LAUNCHER = str(Path(__file__).with_name("launcher.py"))


async def open_transport(config: ServerConfig, root: Path, stack: AsyncExitStack, errlog: Any, closed: asyncio.Event,
                         sign_in: OAuthSignIn | None, on_response: Callable[[Any], Awaitable[None]],
                         sandbox: SandboxPolicy | None) -> Any:
    """The transport of one connection attempt to the server `config` names (its
    streams), `closed` set when the server's side ends; `on_response` sees every
    HTTP answer; a stdio server runs where `sandbox` places it (mcp/sandboxed.py)."""
    if config.transport == "http":
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        if not log.isEnabledFor(logging.DEBUG):  # httpx2 logs every request at INFO
            logging.getLogger("httpx2").setLevel(logging.WARNING)
        auth = await sign_in.provider() if sign_in is not None else None
        client = create_mcp_http_client(headers=dict(config.headers), auth=auth)
        cap_responses(client)  # no answer costs more than message_cap.LIMIT_BYTES
        http = await stack.enter_async_context(client)
        http.event_hooks["response"] = [on_response]
        return _watched(streamable_http_client(config.url or "", http_client=http), closed)
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cwd = root / config.cwd if config.cwd else root
    command, placement = await asyncio.to_thread(sandboxed_command, config, cwd, sandbox)
    if placement is not None and placement.refused:
        raise ServerUnavailable(placement.refused)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-I", "-S", LAUNCHER, str(os.getpid()), *command],
        env=dict(config.env),
        cwd=str(cwd),
    )
    return _watched(stdio_client(params, errlog=errlog), closed)


@asynccontextmanager
async def _watched(transport: Any, closed: asyncio.Event) -> AsyncIterator[Any]:
    """The transport's streams, with `closed` set when the server's side ends
    (a crashed stdio server: its stdout reaches EOF)."""
    async with transport as (read, write):
        relay_send, relay_receive = anyio.create_memory_object_stream(0)

        async def relay() -> None:
            try:
                async with relay_send:
                    async for message in read:
                        await relay_send.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass
            finally:
                closed.set()

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            try:
                yield relay_receive, write
            finally:
                group.cancel_scope.cancel()
