"""One editor window on the agent host: an LSP server of its own (capabilities,
position encoding, open documents, settings, the environment its editor
started it with) over the window's socket, read and answered exactly as on
stdio (`agent_lsp.lsp.server.serve_frames`); the host's first connection is
answered by the early phase while the server loads, as a process of its own
would be. Its `exit` ends this connection, not the host; when it ends, its
folders' sessions are closed, as when the process of a window ends.
"""

from __future__ import annotations

import logging
import socket
from typing import Any, BinaryIO, Mapping

log = logging.getLogger(__name__)


async def serve_lsp_connection(sock: socket.socket, stream: BinaryIO, env: Mapping[str, str], *,
                               process: Any, connection_id: str, shared: Any) -> int:
    """Serve LSP on this connection (its reader `stream` already past the hello)
    until its end of input or `exit`; the exit code."""
    from agent_lsp.lsp import server as lsp_server
    from agent_lsp.lsp.transport import FrameReader, ThreadedWriter

    writer = ThreadedWriter(sock.makefile("wb", buffering=0))
    target = lsp_server.connection_target(writer, process, env, connection_id, shared)
    try:
        await lsp_server.serve_frames(target, FrameReader(stream))
    finally:
        try:
            await target.close()
        except Exception:  # noqa: BLE001 - one window's close never stops the host
            log.exception("closing the folders of connection %s", connection_id)
        writer.close()
    return target.exit_code if target.exit_code is not None else 0
