"""Entry points of the agent_lsp language server (the CLI calls them).

    serve_stdio()            what editors launch (`agent-lsp` with no arguments)
    serve_tcp(host, port)    one client over TCP
    serve_ws(host, port)     one client over WebSocket (needs `websockets`: pygls[ws])

Each returns when the client is done; what the process does around them
(signals, memory, ending shell commands) is the CLI's (`agent_lsp.cli.process`).
The server itself is built by `agent_lsp.lsp.handlers.create_server`. This
module imports no pygls at load time, so `serve_stdio()` can answer
`initialize` from the handshake cache (`agent_lsp.lsp.handshake`) while pygls loads.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import threading
from typing import Any, Callable

from agent_lsp.lsp.handshake import DISABLE_ENV, EarlyInitialize, InitializeFilter, read_message
from agent_lsp.lsp.transport import ThreadedWriter, protect_stdout

log = logging.getLogger(__name__)

IMPLEMENTATION = "agent_lsp.lsp.handlers"


class _Loader(threading.Thread):
    """Imports the server (pygls, lsprotocol, ...) while the main thread reads stdin."""

    def __init__(self) -> None:
        super().__init__(name="agent-lsp-loader", daemon=True)
        self.module: Any = None

    def run(self) -> None:
        try:
            self.module = importlib.import_module(IMPLEMENTATION)
        except BaseException:  # re-raised by the main thread's own import
            self.module = None


def serve_stdio(*, after_warm_up: Callable[[], None] = lambda: None) -> int:
    """Serve LSP on stdin/stdout until `exit` or end of input; the exit code.

    fd 1 is moved aside first: print(), C extensions and child processes write
    to stderr, never into the JSON-RPC stream."""
    rpc_out = protect_stdout()
    writer = ThreadedWriter(rpc_out)
    stdin = sys.stdin.buffer
    loader = _Loader()
    loader.start()

    first: bytes | None = None  # the first message, read while pygls loads
    early: EarlyInitialize | None = None
    if not os.environ.get(DISABLE_ENV):
        item = read_message(stdin)
        if item is None:  # the client went away before saying anything
            writer.close()
            return 0
        first, message = item
        early = EarlyInitialize.answer(message, writer)

    loader.join()
    module = loader.module or importlib.import_module(IMPLEMENTATION)
    server = module.create_server(after_warm_up=after_warm_up)
    server.backlog = lambda: writer.backlog
    server.protocol.set_writer(writer if early is None else InitializeFilter(writer, server.protocol, early))
    code = _run(server, stdin, first)
    writer.close()
    return code


def _run(server: Any, stdin: Any, first: bytes | None) -> int:
    import asyncio

    from pygls.io_ import StdinAsyncReader, run_async

    server._stop_event = stop_event = threading.Event()
    protocol = server.protocol

    async def serve() -> None:
        if first is not None:  # handled as pygls' loop would have, had it read it
            try:
                protocol.handle_message(json.loads(first, object_hook=protocol.structure_message))
            except Exception as error:
                log.exception("Unable to handle message")
                server.report_server_error(error, None)
        reader = StdinAsyncReader(stdin, server.thread_pool)
        await run_async(stop_event=stop_event, reader=reader, protocol=protocol, logger=log,
                        error_handler=server.report_server_error)

    try:
        asyncio.run(serve())
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


def serve_tcp(host: str, port: int, *, after_warm_up: Callable[[], None] = lambda: None) -> None:
    """Serve one LSP client over TCP (pygls: one connection per process)."""
    server = importlib.import_module(IMPLEMENTATION).create_server(after_warm_up=after_warm_up)

    def backlog() -> int:
        transport = getattr(server.protocol.writer, "transport", None)
        return transport.get_write_buffer_size() if transport is not None else 0

    server.backlog = backlog
    server.start_tcp(host, port)


def serve_ws(host: str, port: int, *, after_warm_up: Callable[[], None] = lambda: None) -> None:
    """Serve one LSP client over WebSocket (needs the `websockets` package: pygls[ws])."""
    importlib.import_module(IMPLEMENTATION).create_server(after_warm_up=after_warm_up).start_ws(host, port)
