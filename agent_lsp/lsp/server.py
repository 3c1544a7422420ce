"""Entry points of the agent_lsp language server (the CLI calls them).

    serve_stdio()            what editors launch (`agent-lsp` with no arguments)
    serve_tcp(host, port)    one client over TCP (read and answered as on stdio)
    serve_ws(host, port)     one client over WebSocket (needs `websockets`: pygls[ws])

Each returns when the client is done; what the process does around them
(signals, memory, ending shell commands) is the CLI's (`agent_lsp.cli.server_process`).
The server itself is built by `agent_lsp.lsp.handlers.create_server`. This
module imports no pygls at load time, so `serve_stdio()` can answer
`initialize` from the handshake cache (`agent_lsp.lsp.handshake`) while pygls loads.
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
import sys
import threading
from typing import Any

from agent_lsp.lsp.code_cache import start_code_cache
from agent_lsp.lsp.handshake import DISABLE_ENV, EarlyInitialize, InitializeFilter
from agent_lsp.lsp.transport import MAX_MESSAGE_BYTES, FrameReader, Oversized, ThreadedWriter, protect_stdout

log = logging.getLogger(__name__)

IMPLEMENTATION = "agent_lsp.lsp.handlers"


class _Loader(threading.Thread):
    """Imports the server (pygls, lsprotocol, ...) while the main thread reads stdin."""

    def __init__(self) -> None:
        super().__init__(name="agent-lsp-loader", daemon=True)
        self.module: Any = None

    def run(self) -> None:
        try:
            self.module = _import_server()
        except BaseException:  # re-raised by the main thread's own import
            self.module = None


def _import_server() -> Any:
    """The server's code (pygls, lsprotocol, ours), code made at run time from the code cache."""
    with start_code_cache():
        return importlib.import_module(IMPLEMENTATION)


def serve_stdio(*, process: Any = None) -> int:
    """Serve LSP on stdin/stdout until `exit` or end of input; the exit code.

    fd 1 is moved aside first: print(), C extensions and child processes write
    to stderr, never into the JSON-RPC stream."""
    rpc_out = protect_stdout()
    writer = ThreadedWriter(rpc_out)
    stdin = sys.stdin.buffer
    loader = _Loader()
    loader.start()

    frames = FrameReader(stdin)
    first: bytes | Oversized | None = None  # the first message, read while pygls loads
    early: EarlyInitialize | None = None
    if not os.environ.get(DISABLE_ENV):
        first = frames.read()
        if first is None:  # the client went away before saying anything
            writer.close()
            return 0
        early = EarlyInitialize.answer(first, writer) if isinstance(first, bytes) else None

    loader.join()
    module = loader.module or _import_server()
    server = module.create_server(process=process)
    server.backlog = lambda: writer.backlog
    server.protocol.set_writer(writer if early is None else InitializeFilter(writer, server.protocol, early))
    code = _run(server, frames, first)
    writer.close()
    return code


MAX_UNHANDLED = 64  # messages read ahead of the loop; the reader waits beyond that
END_OF_INPUT_GRACE_S = 2.0


def _run(server: Any, frames: FrameReader, first: bytes | Oversized | None) -> int:
    """pygls' `run_async`, over our frame reader (bounded frames; every body is
    answered, see `agent_lsp.lsp.rpc`).

    A reader thread reads frame after frame and hands each to the event loop,
    in order. It does not wait for the loop between two messages, so while
    sessions stream (long loop turns) a burst of requests (ten followups, a
    cancel) is read at once and handled in the next turn, not one per turn."""
    import asyncio

    server._stop_event = stop_event = threading.Event()
    protocol = server.protocol
    room = threading.Semaphore(MAX_UNHANDLED)

    def handle(item: bytes | Oversized) -> None:
        room.release()
        try:
            if isinstance(item, Oversized):
                log.warning("skipped a message of %d bytes (limit %d)", item.length, MAX_MESSAGE_BYTES)
                protocol.reject_oversized(item.length, MAX_MESSAGE_BYTES)
            else:
                protocol.receive(item)
        except Exception as error:
            log.exception("Unable to handle message")
            server.report_server_error(error, None)

    def handle_all(batch: list[bytes | Oversized]) -> None:
        for item in batch:
            handle(item)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        ended = loop.create_future()

        def read() -> None:
            item = first
            try:
                if item is None:
                    item = frames.read()
                while item is not None and not stop_event.is_set():
                    # What already arrived goes to the loop in one hand-over: each one
                    # costs this thread the GIL, which a busy loop gives back only
                    # every few ms.
                    batch = [item]
                    while len(batch) < MAX_UNHANDLED and frames.ready():
                        batch.append(frames.read())
                    for _ in batch:
                        room.acquire()
                    loop.call_soon_threadsafe(handle_all, batch)
                    item = frames.read()
            except RuntimeError:  # the loop has closed: the server is done
                return
            except Exception:
                log.exception("reading from the client failed")
            try:
                loop.call_soon_threadsafe(lambda: ended.done() or ended.set_result(None))
            except RuntimeError:
                pass

        threading.Thread(target=read, name="agent-lsp-reader", daemon=True).start()
        await ended
        # End of input: what was read is answered first (the client may still
        # read), and an `exit` read just before ends the process with its code.
        await protocol.settle_requests(END_OF_INPUT_GRACE_S)
        if protocol.exit_received:
            await asyncio.sleep(END_OF_INPUT_GRACE_S)

    try:
        asyncio.run(serve())
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


def serve_tcp(host: str, port: int, *, process: Any = None) -> int:
    """Serve one LSP client over TCP, as on stdio (one connection per process,
    as pygls does); the exit code."""
    server = _import_server().create_server(process=process)
    with socket.create_server((host, port)) as listener:
        log.info("serving LSP on %s:%d", host, port)
        connection, _ = listener.accept()
    with connection:
        writer = ThreadedWriter(connection.makefile("wb", buffering=0))
        server.backlog = lambda: writer.backlog
        server.protocol.set_writer(writer)
        code = _run(server, FrameReader(connection.makefile("rb")), None)
        writer.close()
        try:  # wakes the reader thread, which may still wait for a client that waits for us
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    return code


def serve_ws(host: str, port: int, *, process: Any = None) -> None:
    """Serve one LSP client over WebSocket (needs the `websockets` package: pygls[ws])."""
    _import_server().create_server(process=process).start_ws(host, port)
