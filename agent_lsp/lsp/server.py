"""Entry points of the agent_lsp language server (the CLI calls them).

    serve_stdio()            what editors launch (`agent-lsp` with no arguments)
    serve_tcp(host, port)    one client over TCP (read and answered as on stdio)
    serve_ws(host, port)     one client over WebSocket (needs `websockets`: pygls[ws])

Each returns when the client is done; what the process does around them
(signals, memory, ending shell commands) is the CLI's (`agent_lsp.cli.server_process`).
The server itself is built by `agent_lsp.lsp.handlers.create_server`. This
module imports no pygls at load time: on stdio the start is in two phases.

1. From spawn, the event loop and the reader run, and the opening messages
   (`initialize` from the server's own description, `initialized`, `agent/session/new`)
   are answered from their raw JSON, before pygls has loaded
   (`agent_lsp.lsp.early`). The first message that phase cannot answer exactly
   as the server would, and every one after it, is queued in order.
2. A loader thread imports pygls, lsprotocol and our handlers (and the agent's
   code, which the warm-up would import next; httpx too when a session has an
   HTTP provider) in the background; the server
   is built, takes over what the early phase made (`EarlyPhase.hand_over`),
   handles the queue in order, and from then on every message goes straight to it.

The loader starts once the first session is answered, when the early phase
has to leave a message to the server, when no message has come for
`LOAD_WHEN_IDLE_S` (a client answering the settings asked for takes a few ms),
or right after an `initialize` whose `initialized` the early phase will leave
to the server: both threads compete for the one interpreter lock, so while the
client sends its opening messages the loader waits, and the first session is
answered on the CPU of its own work alone (the garbage collector waits too). A client that sends nothing more (an editor waiting for the user)
has the server loaded a moment later, as before. `AGENT_LSP_NO_INIT_CACHE=1`
turns the early phase off with the code cache.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import socket
import sys
import threading
from typing import Any, Callable

from agent_lsp.lsp.code_cache import (COMPILING_MODULES, DISABLE_ENV, StartCodeCache, forget_generated_sources,
                                      start_code_cache)
from agent_lsp.lsp.early import EarlyPhase
from agent_lsp.lsp.handshake import InitializeFilter
from agent_lsp.lsp.transport import MAX_MESSAGE_BYTES, FrameReader, Oversized, ThreadedWriter, protect_stdout

log = logging.getLogger(__name__)

IMPLEMENTATION = "agent_lsp.lsp.handlers"
AGENT_CODE = "agent_lsp.workspace.host"  # the agent, tools and providers' entry: what the first session needs
HTTP_PROVIDERS = ("agent_lsp.llm.openai", "agent_lsp.llm.anthropic")  # a session imported one: its requests need httpx
HTTP_TRANSPORT = "agent_lsp.llm.transport"
LOAD_WHEN_IDLE_S = 0.05  # with no message for this long, the loader starts


def _import_server(modules: tuple[str, ...] = COMPILING_MODULES) -> Any:
    """The server's code (pygls, lsprotocol, ours), the code `modules` make at run
    time from the code cache."""
    with start_code_cache(modules=modules):
        module = importlib.import_module(IMPLEMENTATION)
    forget_generated_sources()
    return module


def _create_server(module: Any, process: Any, writer: Any, early_initialize: Any = None, *,
                   env: Any = os.environ, connection_id: str | None = None, shared: Any = None) -> Any:
    server = module.create_server(env, process=process)
    server.connection_id = connection_id
    if shared is not None:  # a window of the agent host
        from agent_lsp.lsp.host_window import HostWindow

        server.window = HostWindow(shared, connection_id, server.events.attach, server.editor)
    server.backlog = lambda: writer.backlog
    filtered = writer if early_initialize is None else InitializeFilter(writer, server.protocol, early_initialize)
    server.protocol.set_writer(filtered)
    return server


def serve_stdio(*, process: Any = None) -> int:
    """Serve LSP on stdin/stdout until `exit` or end of input; the exit code.

    fd 1 is moved aside first: print(), C extensions and child processes write
    to stderr, never into the JSON-RPC stream."""
    rpc_out = protect_stdout()
    writer = ThreadedWriter(rpc_out)
    frames = FrameReader(sys.stdin.buffer)
    if os.environ.get(DISABLE_ENV):
        code = _run(Serving(_create_server(_import_server(), process, writer)), frames)
    else:
        starting = _Starting(writer, process)
        # The first message is read before the event loop starts (asyncio takes a
        # while to import): a plain `initialize` is answered at once.
        first = frames.read()
        if first is None:  # the client went away before saying anything
            writer.close()
            return 0
        left = starting.early.receive(first)
        code = _run(starting, frames, left[0] if left else None)
    writer.close()
    return code


class Serving:
    """Messages to the loaded server."""

    def __init__(self, server: Any, *, one_of_many: bool = False):
        self.server = server
        self.protocol = server.protocol
        self.one_of_many = one_of_many  # one of several connections of the process (the agent host)
        self.exit_code: int | None = None

    def begin(self, loop: Any, stop_event: threading.Event, ended: Any, release: Callable[[], None]) -> None:
        self.server._stop_event = stop_event
        self._release = release
        if self.one_of_many:  # `exit` ends this connection only

            def end_connection(code: int) -> None:
                self.exit_code = code
                if not ended.done():
                    ended.set_result(None)

            self.protocol.end_connection = end_connection

    def handle(self, item: bytes | Oversized) -> None:
        self._release()
        try:
            if isinstance(item, Oversized):
                log.warning("skipped a message of %d bytes (limit %d)", item.length, MAX_MESSAGE_BYTES)
                self.protocol.reject_oversized(item.length, MAX_MESSAGE_BYTES)
            else:
                self.protocol.receive(item)
        except Exception as error:
            log.exception("Unable to handle message")
            self.server.report_server_error(error, None)

    async def end_of_input(self) -> None:
        """What was read is answered first (the client may still read), and an
        `exit` read just before ends the process with its code."""
        import asyncio

        protocol = self.protocol
        await protocol.settle_requests(END_OF_INPUT_GRACE_S)
        if protocol.exit_received and not self.one_of_many:
            await asyncio.sleep(END_OF_INPUT_GRACE_S)

    async def close(self) -> None:
        """The connection is over (one of several): close its folders' hosts."""
        await self.server.close_hosts()


class _Starting:
    """Messages while the server loads: the early phase answers what it can, the
    rest waits in order for the server, which then takes over (see the module's
    docstring)."""

    def __init__(self, writer: ThreadedWriter, process: Any, *, env: Any = os.environ, connection_id: str | None = None,
                 shared: Any = None):
        self.writer = writer
        self.process = process
        self.env = env
        self.connection_id = connection_id  # one of several connections of the process (the agent host)
        self.shared = shared  # the host's live sessions (agent_lsp.workspace.shared_sessions)
        self.early = EarlyPhase(writer, process, env, connection_id)
        self.waiting: list[bytes | Oversized] = []
        self.serving: Serving | None = None
        # typing's forward references (our models', lsprotocol's) from the code cache,
        # for the early answers and the loader alike; closed when the loader is done
        self.forward_refs = StartCodeCache(("typing",)).open()
        self._loader: threading.Thread | None = None
        self._idle: Any = None
        # No collection while the opening messages are answered (some 20 ms of their
        # CPU); the loader's start turns the collector back on, and the warm-up's
        # full collection (`ServerProcess.agent_code_loaded`) frees what they left.
        gc.disable()

    def begin(self, loop: Any, stop_event: threading.Event, ended: Any, release: Callable[[], None]) -> None:
        self.loop, self.stop_event, self.ended, self.release = loop, stop_event, ended, release
        self.loaded = loop.create_future()
        self._idle = loop.call_later(LOAD_WHEN_IDLE_S, self._start_loader)
        self.early.release = release
        if self.early.initialize_body is not None and not self.early.answers_initialized():
            self._start_loader()  # the early phase ends at `initialized`: no need to wait

    def handle(self, item: bytes | Oversized) -> None:
        if self.serving is not None:
            self.serving.handle(item)
            return
        left = self.early.receive(item)  # what it handled, it gave the room in the read-ahead back for
        if left:
            self.waiting += left  # their room in the read-ahead is given back once the server has them
            self._start_loader()
        elif self.early.hosts:  # the first session is answered: what comes next (a prompt) needs the server
            self.writer.drain(0.05)  # the answer on the wire before the loader takes the interpreter lock
            self._start_loader()
        elif self._loader is None:
            self._idle.cancel()
            self._idle = self.loop.call_later(LOAD_WHEN_IDLE_S, self._start_loader)

    def _start_loader(self) -> None:
        if self._loader is None:
            gc.enable()
            self._idle.cancel()
            self._loader = threading.Thread(target=self._load, name="agent-lsp-loader", daemon=True)
            self._loader.start()

    def _load(self) -> None:
        module = None
        try:
            module = _import_server(("attr._make",))  # typing's are `forward_refs`
            importlib.import_module(AGENT_CODE)
        except BaseException:  # re-raised by the loop thread's own import
            module = None
        finally:
            self.forward_refs.close()
        if module is not None and any(name in sys.modules for name in HTTP_PROVIDERS):
            try:  # the first prompt does not wait for httpx and the TLS context
                importlib.import_module(HTTP_TRANSPORT).prepare()
            except Exception as error:  # the first request meets it again, and says so
                log.debug("could not prepare the HTTP transport: %s", error)
        try:
            self.loop.call_soon_threadsafe(self._take_over, module)
        except RuntimeError:  # the loop has closed: the client went away meanwhile
            pass

    def _take_over(self, module: Any) -> None:
        try:
            server = _create_server(module or _import_server(), self.process, self.writer, self.early.initialize,
                                    env=self.env, connection_id=self.connection_id, shared=self.shared)
            serving = Serving(server, one_of_many=self.connection_id is not None)
            serving.begin(self.loop, self.stop_event, self.ended, self.release)
            held = self.early.hand_over(server)
        except BaseException as error:  # the server cannot start: the process ends with the error
            for waiting in (self.ended, self.loaded):
                if not waiting.done():
                    waiting.set_exception(error)
            return
        self.serving = serving
        waiting, self.waiting = held + self.waiting, []
        for item in waiting:
            serving.handle(item)
        self.loaded.set_result(None)

    async def end_of_input(self) -> None:
        if self.serving is None and not self.waiting:
            return  # everything read was answered early
        await self.loaded
        assert self.serving is not None
        await self.serving.end_of_input()

    @property
    def exit_code(self) -> int | None:
        return self.serving.exit_code if self.serving is not None else None

    async def close(self) -> None:
        """The connection is over: close what it opened, loaded or not."""
        if self.serving is not None:
            await self.serving.close()
            return
        hosts, self.early.hosts = list(self.early.hosts.values()), {}
        for host in hosts:
            await host.close()


MAX_UNHANDLED = 64  # messages read ahead of the loop; the reader waits beyond that
END_OF_INPUT_GRACE_S = 2.0


def _run(target: Serving | _Starting, frames: FrameReader, first: bytes | Oversized | None = None) -> int:
    """pygls' `run_async`, over our frame reader (bounded frames; every body is
    answered, see `agent_lsp.lsp.rpc`).

    A reader thread reads frame after frame and hands each to the event loop,
    in order. It does not wait for the loop between two messages, so while
    sessions stream (long loop turns) a burst of requests (ten followups, a
    cancel) is read at once and handled in the next turn, not one per turn."""
    import asyncio

    try:
        asyncio.run(serve_frames(target, frames, first))
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


async def serve_frames(target: Any, frames: FrameReader, first: bytes | Oversized | None = None) -> None:
    """Hand the frames read to `target` in order until the end of input (or, for
    one of several connections, its `exit`); see `_run`."""
    import asyncio

    stop_event = threading.Event()
    room = threading.Semaphore(MAX_UNHANDLED)

    def handle_all(batch: list[bytes | Oversized]) -> None:
        for item in batch:
            target.handle(item)

    loop = asyncio.get_running_loop()
    ended = loop.create_future()
    target.begin(loop, stop_event, ended, room.release)

    def read() -> None:
        try:
            item = frames.read() if first is None else first
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
    stop_event.set()
    await target.end_of_input()


def serve_tcp(host: str, port: int, *, process: Any = None) -> int:
    """Serve one LSP client over TCP, as on stdio (one connection per process,
    as pygls does); the exit code."""
    module = _import_server()
    with socket.create_server((host, port)) as listener:
        log.info("serving LSP on %s:%d", host, port)
        connection, _ = listener.accept()
    with connection:
        writer = ThreadedWriter(connection.makefile("wb", buffering=0))
        code = _run(Serving(_create_server(module, process, writer)), FrameReader(connection.makefile("rb")))
        writer.close()
        try:  # wakes the reader thread, which may still wait for a client that waits for us
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    return code


def connection_target(writer: ThreadedWriter, process: Any, env: Any, connection_id: str,
                      shared: Any) -> "Serving | _Starting":
    """What serves one of several connections of the process (the agent host):
    the loaded server, or, while the process has not loaded it yet (its first
    connection), the early phase and the loader, as on stdio."""
    if IMPLEMENTATION in sys.modules and AGENT_CODE in sys.modules:
        module = sys.modules[IMPLEMENTATION]
        return Serving(_create_server(module, process, writer, env=env, connection_id=connection_id, shared=shared),
                       one_of_many=True)
    return _Starting(writer, process, env=env, connection_id=connection_id, shared=shared)


def serve_ws(host: str, port: int, *, process: Any = None) -> None:
    """Serve one LSP client over WebSocket (needs the `websockets` package: pygls[ws])."""
    _import_server().create_server(process=process).start_ws(host, port)
