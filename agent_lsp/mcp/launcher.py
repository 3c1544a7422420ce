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

Only the standard library, and no agent_lsp import: it starts in a few ms.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

GRACE_S = 2.0
WATCH_INTERVAL_S = 0.5
PR_SET_PDEATHSIG = 1


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
    try:
        child = subprocess.Popen(argv[2:])  # inherits stdin/stdout/stderr: the MCP stdio pipes
    except OSError as error:
        print(f"cannot start {argv[2]}: {error.strerror or error}", file=sys.stderr)
        return 127

    def watchdog() -> None:
        while True:
            time.sleep(WATCH_INTERVAL_S)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watchdog, daemon=True).start()
    while True:
        try:
            return child.wait()
        except InterruptedError:
            continue


if __name__ == "__main__":
    sys.exit(main(sys.argv))
