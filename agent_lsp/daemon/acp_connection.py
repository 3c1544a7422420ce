"""One ACP client on the agent host (`agent-lsp acp --host`): the ACP face with
its own settings and environment, over the connection's socket, read by
asyncio as the face reads stdio."""

from __future__ import annotations

import asyncio
import socket
from typing import Any, Mapping


async def serve_acp_connection(sock: socket.socket, first: bytes, env: Mapping[str, str], settings: dict[str, Any] | None,
                               *, connection_id: str) -> None:
    """Serve ACP on this connection until the client closes it; `first`: what
    came after the hello, read before anything else."""
    from agent_lsp.acp.server import serve_connection
    from agent_lsp.acp.transport import READ_LIMIT

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    reader.feed_data(first)  # before the transport exists, so it stays first
    protocol = asyncio.StreamReaderProtocol(reader)
    sock.setblocking(False)
    transport, _ = await loop.connect_accepted_socket(lambda: protocol, sock=sock)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    try:
        await serve_connection(reader, writer, settings, env, connection_id)
    finally:
        writer.close()
