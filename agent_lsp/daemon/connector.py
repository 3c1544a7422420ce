"""The connector: what an editor launches as `agent-lsp` when the agent host is
on. It finds the user's host (the socket in `agent_lsp.daemon.address`),
starts it when none answers, says hello, and from then on copies bytes: stdin
to the host, the host to stdout. It knows no protocol and imports nothing of
the agent, so it starts in tens of milliseconds; a warm host answers at once.

When the host closes the connection (after `exit`, or because it died) the
connector ends; an editor restarts it as it restarts any language server. When
the editor closes stdin, the connector tells the host (the end of input), and
ends once the host has answered what was in flight.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Mapping

from agent_lsp.daemon.address import AddressError, installation_tag, log_path, prepare_directory, socket_path
from agent_lsp.daemon.hello import MAX_HELLO_BYTES, hello

START_TIMEOUT_S = 30.0  # a cold host imports the server before it accepts: seconds on a slow machine
POLL_S = 0.01
CHUNK = 1 << 16


def connect(path: Path) -> socket.socket | None:
    """A connection to the host listening at `path`, None when none listens."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def start_host(path: Path, env: Mapping[str, str]) -> "object":
    """Start a host in its own session (it outlives this connector), its output in its log."""
    import subprocess

    log = open(log_path(path), "ab")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "agent_lsp", "daemon", "--socket", str(path), "--log-file", str(log_path(path))],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=dict(env),
            start_new_session=True, close_fds=True, cwd="/")
    finally:
        log.close()


def connect_or_start(path: Path, env: Mapping[str, str], timeout_s: float = START_TIMEOUT_S) -> socket.socket:
    """A connection to the user's host, started if none answers; OSError with the
    reason when it cannot be reached."""
    sock = connect(path)
    if sock is not None:
        return sock
    child = start_host(path, env)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        sock = connect(path)
        if sock is not None:
            return sock
        code = child.poll()  # type: ignore[attr-defined]
        if code not in (None, 0):  # 0: another host won the start, and will answer
            raise OSError(f"the agent host failed to start (exit code {code}); see {log_path(path)}")
        time.sleep(POLL_S)
    raise OSError(f"the agent host did not answer within {timeout_s:.0f} s; see {log_path(path)}")


def read_answer(sock: socket.socket) -> tuple[bytes, bytes]:
    """The host's answer line and the bytes that came after it."""
    data = b""
    while b"\n" not in data:
        chunk = sock.recv(CHUNK)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_HELLO_BYTES:
            break
    line, _, rest = data.partition(b"\n")
    return line, rest


def _pump_stdin(sock: socket.socket) -> None:
    try:
        while True:
            data = os.read(0, CHUNK)
            if not data:
                break
            sock.sendall(data)
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_WR)  # the end of input, as the host should see it
    except OSError:
        pass


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(1, view)
        view = view[written:]


def run_connector(face: str = "lsp", env: Mapping[str, str] = os.environ) -> int:
    """Relay stdio to the user's agent host until either side ends; the exit code."""
    import json

    path = socket_path(env)
    try:
        prepare_directory(path.parent)
        sock = connect_or_start(path, env)
    except (AddressError, OSError) as error:
        print(f"agent-lsp: cannot reach the agent host: {error}", file=sys.stderr)
        return 1
    sock.sendall(hello(face, installation_tag()))
    threading.Thread(target=_pump_stdin, args=(sock,), name="agent-lsp-stdin", daemon=True).start()
    line, rest = read_answer(sock)
    try:
        answer = json.loads(line) if line else {"error": "the agent host closed the connection"}
    except ValueError:
        answer = {"error": "the agent host answered something else than its hello"}
    if not isinstance(answer, dict) or answer.get("error") or not answer.get("ok"):
        print(f"agent-lsp: the agent host refused the connection: {answer.get('error') if isinstance(answer, dict) else answer}",
              file=sys.stderr)
        return 1
    try:
        if rest:
            _write_all(rest)
        while True:
            data = sock.recv(CHUNK)
            if not data:
                break
            _write_all(data)
    except OSError:
        pass
    return 0
