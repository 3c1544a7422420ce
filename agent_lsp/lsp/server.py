"""Entry points of the agent_lsp language server (the CLI calls them).

    serve_stdio()            what editors launch (`agent-lsp` with no arguments)
    serve_tcp(host, port)    one client over TCP
    serve_ws(host, port)     one client over WebSocket (needs `websockets`: pygls[ws])

The server itself (handlers, settings, hosts) is `agent_lsp.lsp.language_server`;
`create_server()` and `raw_params_converter` are re-exported here. This module
imports no pygls at load time, so `serve_stdio()` can answer `initialize` from
the handshake cache (`agent_lsp.lsp.handshake`) while pygls loads.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
from typing import Any

from agent_lsp.lsp.handshake import (
    DISABLE_ENV,
    InitializeFilter,
    ReplayReader,
    cache_path,
    frame,
    read_cached,
    read_message,
    template_result,
)
from agent_lsp.lsp.transport import ThreadedWriter, protect_stdout

log = logging.getLogger(__name__)

IMPLEMENTATION = "agent_lsp.lsp.language_server"


def __getattr__(name: str) -> Any:
    if name in ("create_server", "raw_params_converter", "AgentLanguageServer"):
        return getattr(importlib.import_module(IMPLEMENTATION), name)
    raise AttributeError(name)


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


def serve_stdio() -> None:
    """Serve LSP on stdin/stdout until `exit` or end of input, then end the process.

    fd 1 is moved aside first: print(), C extensions and child processes write
    to stderr, never into the JSON-RPC stream."""
    rpc_out = protect_stdout()
    writer = ThreadedWriter(rpc_out)
    stdin = sys.stdin.buffer
    loader = _Loader()
    loader.start()

    replay = b""
    initialize: tuple[Any, Any, bool, Any, bool] | None = None
    if not os.environ.get(DISABLE_ENV):
        first = read_message(stdin)
        if first is None:  # the client went away before saying anything
            writer.close()
            os._exit(0)
        replay, message = first
        if message.get("method") == "initialize" and "id" in message:
            params = message.get("params") or {}
            path = cache_path(params)
            cached = read_cached(path)
            cache_is_current = cached is not None
            if cached is None:  # the first start: the template shipped with the package
                cached = template_result(params)
            if cached is not None:
                writer.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": cached}))
            initialize = (message["id"], path, cached is not None, cached, cache_is_current)

    loader.join()
    module = loader.module or importlib.import_module(IMPLEMENTATION)
    server = module.create_server()
    server.backlog = lambda: writer.backlog
    out: Any = writer if initialize is None else InitializeFilter(writer, *initialize)
    server.protocol.set_writer(out)
    code = _run(server, ReplayReader(replay, stdin))
    writer.close()
    # The stdin reader thread may still block on a read the client never ends:
    # leave without joining it.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)


def _run(server: Any, stdin: Any) -> int:
    import asyncio

    from pygls.io_ import StdinAsyncReader, run_async

    server._stop_event = stop_event = threading.Event()
    reader = StdinAsyncReader(stdin, server.thread_pool)
    try:
        asyncio.run(
            run_async(stop_event=stop_event, reader=reader, protocol=server.protocol, logger=log, error_handler=server.report_server_error)
        )
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


def serve_tcp(host: str, port: int) -> None:
    """Serve one LSP client over TCP (pygls: one connection per process)."""
    server = importlib.import_module(IMPLEMENTATION).create_server()

    def backlog() -> int:
        transport = getattr(server.protocol.writer, "transport", None)
        return transport.get_write_buffer_size() if transport is not None else 0

    server.backlog = backlog
    server.start_tcp(host, port)


def serve_ws(host: str, port: int) -> None:
    """Serve one LSP client over WebSocket (needs the `websockets` package: pygls[ws])."""
    importlib.import_module(IMPLEMENTATION).create_server().start_ws(host, port)
