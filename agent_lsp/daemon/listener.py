"""The agent host process: one per user (per installation), serving every
window that connects to its socket.

At start it takes the lock beside the socket (a second host started at the
same moment waits for it, and leaves as soon as the first one answers),
binds the socket with mode 0600 and accepts at once: its first window is
answered as a process of its own answers (the early phase, while the server
loads in the background), every later one meets a warm process. Each
connection says hello (`agent_lsp.daemon.hello`) and gets a server of its own
(`agent_lsp.daemon.lsp_connection`). With no connection for `idle_s` seconds
the host removes its socket and ends; the next window starts a new one.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from agent_lsp.daemon.address import TOKEN_ENV, installation_tag, lock_path, prepare_directory, token_path
from agent_lsp.daemon.connector import connect
from agent_lsp.daemon.hello import answer, read_hello, receive_hello
from agent_lsp.workspace.shared_sessions import SharedSessions

log = logging.getLogger(__name__)

LOCK_WAIT_S = 30.0  # how long a second host waits for the first one's lock
HELLO_TIMEOUT_S = 10.0


def _take_lock(path: Path, socket_file: Path) -> int | None:
    """The lock's descriptor, or None when another host holds it and answers."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if _answers(socket_file) or time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.05)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _answers(socket_file: Path) -> bool:
    sock = connect(socket_file)
    if sock is not None:
        sock.close()
    return sock is not None


def _bind(socket_file: Path) -> socket.socket:
    try:
        socket_file.unlink()  # a dead host's socket: the lock says nobody serves it
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)  # made 0600, with no moment at a wider mode
    try:
        listener.bind(str(socket_file))
    finally:
        os.umask(previous)
    os.chmod(socket_file, 0o600)
    listener.listen(64)
    listener.setblocking(False)
    return listener


class AgentHostProcess:
    """The host's connections and its idle timer."""

    def __init__(self, socket_file: Path, idle_s: float, process: Any, token: str | None = None):
        self.socket_file = socket_file
        self.idle_s = idle_s
        self.process = process
        self.token = token  # what a network connection must send (`--listen`)
        self.tag = installation_tag()
        self.shared = SharedSessions()  # a session open in one window is followed live by the others
        self.connections: set[asyncio.Task] = set()
        self._ids = itertools.count(1)
        self._idle: asyncio.TimerHandle | None = None
        self._stopped: asyncio.Future | None = None

    async def run(self, listener: socket.socket, network: socket.socket | None = None) -> None:
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        self._arm_idle()
        accepting = [asyncio.ensure_future(self._accept(listener, network=False))]
        if network is not None:
            accepting.append(asyncio.ensure_future(self._accept(network, network=True)))
        await self._stopped
        for task in accepting:
            task.cancel()
        listener.close()
        if network is not None:
            network.close()

    async def _accept(self, listener: socket.socket, *, network: bool) -> None:
        loop = asyncio.get_running_loop()
        while True:
            sock, _ = await loop.sock_accept(listener)
            if network:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            task = asyncio.ensure_future(self._serve(sock, f"c{next(self._ids)}", network=network))
            self.connections.add(task)
            task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task) -> None:
        self.connections.discard(task)
        if not self.connections:
            self._arm_idle()

    def _arm_idle(self) -> None:
        loop = asyncio.get_running_loop()
        self._idle = loop.call_later(self.idle_s, self._stop_when_idle)

    def _stop_when_idle(self) -> None:
        if self.connections or self._stopped is None or self._stopped.done():
            return
        log.info("no connection for %.0f s: the agent host stops", self.idle_s)
        try:
            self.socket_file.unlink()  # the next window starts a new host at once
        except OSError:
            pass
        self._stopped.set_result(None)

    async def _serve(self, sock: socket.socket, connection_id: str, *, network: bool = False) -> None:
        from agent_lsp.daemon.acp_connection import serve_acp_connection
        from agent_lsp.daemon.lsp_connection import serve_lsp_connection

        sock.setblocking(True)
        try:
            line, first = await asyncio.wait_for(asyncio.to_thread(receive_hello, sock), HELLO_TIMEOUT_S)
            fields, problem = read_hello(line, self.tag, self.token if network else None)
            if fields is None:
                log.warning("refused a connection: %s", problem)
                sock.sendall(answer(error=problem))
                return
            sock.sendall(answer(pid=os.getpid()))
            log.info("connection %s (%s)", connection_id, fields["face"])
            if fields["face"] == "acp":
                await serve_acp_connection(sock, first, fields["env"], fields["settings"], connection_id=connection_id)
                code = 0
            else:
                code = await serve_lsp_connection(sock, first, fields["env"], process=self.process,
                                                  connection_id=connection_id, shared=self.shared)
            log.info("connection %s ended (exit code %d)", connection_id, code)
        except asyncio.TimeoutError:
            log.warning("refused a connection that sent no hello within %.0f s", HELLO_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - one connection's failure never stops the host
            log.exception("connection %s failed", connection_id)
        finally:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def network_token(socket_file: Path, env: Any) -> tuple[str, Path | None]:
    """The token network connections must send: AGENT_LSP_HOST_TOKEN, else a new
    one written (mode 0600) beside the socket, whose path is returned."""
    given = env.get(TOKEN_ENV)
    if given:
        return given, None
    import secrets

    token = secrets.token_urlsafe(32)
    path = token_path(socket_file)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    return token, path


def serve_host(socket_file: Path, idle_s: float, process: Any, listen: tuple[str, int] | None = None,
               env: Any = os.environ) -> int:
    """Run the user's agent host at `socket_file` (and, with `listen`, on that TCP
    address for connections that send the token) until idle; the exit code (0
    also when another host already serves there)."""
    prepare_directory(socket_file.parent)
    lock = _take_lock(lock_path(socket_file), socket_file)
    if lock is None:
        log.info("another agent host serves %s", socket_file)
        return 0
    listener = _bind(socket_file)
    network = token = None
    if listen is not None:
        token, written = network_token(socket_file, env)
        network = socket.create_server(listen, reuse_port=False)
        network.setblocking(False)
        where = f"the token is in {written}" if written else f"the token is {TOKEN_ENV}"
        print(f"agent-lsp daemon: listening on {listen[0]}:{network.getsockname()[1]}; {where}", file=sys.stderr, flush=True)
    log.info("agent host %d serving %s", os.getpid(), socket_file)
    host = AgentHostProcess(socket_file, idle_s, process, token)
    try:
        asyncio.run(host.run(listener, network))
    finally:
        os.close(lock)
    return 0
