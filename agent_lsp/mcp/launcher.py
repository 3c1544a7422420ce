"""Runs one stdio MCP server so that it dies with the language server.

    python -I -S launcher.py <parent pid> <command> [args...]

The MCP SDK starts the server in a process group of its own (so the SDK can
stop the whole tree), which also means a language server killed with SIGKILL
would leave it running. This launcher sits between the two: it asks Linux to
send it SIGTERM when its parent dies (PR_SET_PDEATHSIG), polls its parent as
a watchdog where that is not available (and for the moment before prctl took
effect), and on either signal stops its whole process group (the server and
everything the server started, e.g. `npx` or `uvx` children): SIGTERM, then
SIGKILL after a grace period. It exits with the server's exit status.

It also relays the server's output, one message (line) at a time, through a
cap (message_cap.py, loaded by its path): a message over the cap never
reaches the language server whole, only a short one saying how much was cut.

Only the standard library, and no agent_lsp import: it starts in a few ms.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time

GRACE_S = 2.0
WATCH_INTERVAL_S = 0.5
PR_SET_PDEATHSIG = 1
READ_BYTES = 65536


def _message_cap():
    spec = importlib.util.spec_from_file_location("agent_lsp_message_cap", os.path.join(os.path.dirname(__file__), "message_cap.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _relay(source: int, cap_module) -> None:
    """The server's output to ours, each message capped."""
    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]

    cap = cap_module.LineCap(write)
    try:
        while True:
            data = os.read(source, READ_BYTES)
            if not data:
                break
            cap.feed(data)
        cap.end()
    except OSError:  # our reader is gone: the language server closed the pipe
        pass
    finally:
        os.close(source)
        if cap.cut:
            print(f"{cap.cut} message(s) over {cap.limit:,} bytes were cut", file=sys.stderr)


def _parent_death_signal(signum: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stop_group(child: subprocess.Popen[bytes] | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the group signal reaches us too
    group = os.getpgrp()
    try:
        os.killpg(group, signal.SIGTERM)
    except OSError:
        pass
    if child is not None:
        try:
            child.wait(GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(group, signal.SIGKILL)  # the stragglers, and this launcher
    except OSError:
        pass
    os._exit(128 + signal.SIGTERM)


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: launcher.py <parent pid> <command> [args...]", file=sys.stderr)
        return 2
    parent = int(argv[1])
    child: subprocess.Popen[bytes] | None = None
    signal.signal(signal.SIGTERM, lambda *_: _stop_group(child))
    signal.signal(signal.SIGHUP, lambda *_: _stop_group(child))
    _parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl took effect
        return 128 + signal.SIGTERM
    cap_module = _message_cap()
    try:
        # inherits stdin and stderr: the MCP stdio pipes; its stdout comes through the cap
        child = subprocess.Popen(argv[2:], stdout=subprocess.PIPE)
    except OSError as error:
        print(f"cannot start {argv[2]}: {error.strerror or error}", file=sys.stderr)
        return 127
    assert child.stdout is not None
    relay = threading.Thread(target=_relay, args=(os.dup(child.stdout.fileno()), cap_module), daemon=True)
    child.stdout.close()
    relay.start()

    def watchdog() -> None:
        while True:
            time.sleep(WATCH_INTERVAL_S)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watchdog, daemon=True).start()
    while True:
        try:
            status = child.wait()
            break
        except InterruptedError:
            continue
    relay.join(GRACE_S)  # what the server wrote before it ended (its children may hold the pipe)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
