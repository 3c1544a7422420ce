"""Inside the sandbox: the proxy on the sandbox's own loopback, for the allow list.

With `shell.allowedDomains`, the sandbox still has no network (only its own
loopback); the host's proxy socket (`proxy.py`) is mounted in, and the
sandbox's first process is this bridge, run by the server's own Python
(`python -I -S -c`, nothing imported but the standard library). It

1. listens on 127.0.0.1 (a free port of the sandbox's loopback);
2. starts the command with `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (and the
   lower-case forms, `NO_PROXY` for the loopback, and `NODE_USE_ENV_PROXY`)
   pointing there, after loading the seccomp filter into the command's
   process (the bridge itself needs a Unix socket, the command gets none);
3. passes each connection to the host's proxy over the Unix socket, and ends
   with the command's exit status (it is process 1 of the sandbox: when it
   ends, the kernel ends everything left in it).

The bridge makes itself undumpable before it starts the command, so the
command can never ptrace it or read its memory to borrow its Unix socket. It
imports only C modules (`_socket`, `_thread`) and ctypes, to start fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Sequence

PROXY_SOCKET_IN_SANDBOX = "/run/agent-lsp-proxy.sock"
PROXY_SOCKET_WITHOUT_RUN = "/dev/agent-lsp-proxy.sock"  # where /run is not a folder the sandbox makes empty
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

BRIDGE = r"""
import _socket, _thread, ctypes, os, sys
path, program, argv = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[4:]
listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
url = "http://127.0.0.1:%d" % listener.getsockname()[1]
env = dict(os.environ)
for name in VARIABLES:
    env[name] = url
env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
env["NODE_USE_ENV_PROXY"] = "1"
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0 before the fork: never open to the command's ptrace
child = os.fork()
if child == 0:
    listener.close()
    if program:
        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        code = ctypes.create_string_buffer(program, len(program))
        prog = Prog(len(program) // 8, ctypes.addressof(code))
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
            os.write(2, b"sandbox: the seccomp filter could not be loaded\n")
            os._exit(126)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as error:
        os.write(2, ("sandbox: %s: %s\n" % (argv[0], error.strerror)).encode())
        os._exit(127)
def relay(a, b, done=None):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
        b.shutdown(_socket.SHUT_WR)
    except OSError:
        pass
    if done is not None:
        done.release()
def serve(fd):
    conn = _socket.socket(fileno=fd)
    up = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        return
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(relay, (up, conn, done))
    relay(conn, up)
    done.acquire()
    up.close()
    conn.close()
def accept():
    while True:
        fd, _ = listener._accept()
        _thread.start_new_thread(serve, (fd,))
_thread.start_new_thread(accept, ())
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        os._exit(0)
    if pid == child:
        os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
""".replace("VARIABLES", repr(PROXY_VARIABLES))


def bridge_python() -> tuple[str, Path]:
    """The interpreter the bridge runs on (the one the server's virtual
    environment was made from) and the installation it needs to see."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base), Path(os.path.realpath(sys.base_prefix))


def bridge_argv(python: str, program: bytes | None, argv: Sequence[str],
                socket_path: str = PROXY_SOCKET_IN_SANDBOX) -> list[str]:
    return [python, "-I", "-S", "-c", BRIDGE, socket_path, (program or b"").hex(), "--", *argv]
