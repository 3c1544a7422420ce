"""Child processes that die with the server, even when it is killed with -9.

A command (or a stdio MCP server) runs in its own session and process group,
so that cancel can kill everything it started. A killed server runs no exit
code, and the kernel reparents such a group instead of ending it. Two guards,
for any code that starts children:

- `die_with_parent()`: a `preexec_fn` that asks the kernel (Linux
  `PR_SET_PDEATHSIG`) to SIGKILL the child when the thread that started it
  ends. Only the direct child: its own children do not inherit it. Start the
  child from a thread that lives as long as the server (the event loop's).
- `GroupGuard.start(pgid)`: a watchdog process (`sh`) blocked reading a pipe
  whose other end only the server holds. When the server dies, by any means,
  the kernel closes that end, the read returns, and the watchdog kills the
  whole group. `release()` stops it when the group ended normally.

Elsewhere than Linux the first is a no-op, the second works wherever `sh` does.
"""

from __future__ import annotations

import ctypes
import logging
import os
import shutil
import signal
import subprocess
import sys
from typing import Callable

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


# Resolved now, not in the forked child (where only async-signal-safe work belongs).
_prctl = _load_prctl()


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A `preexec_fn` (compose with others by calling it) that makes the child
    receive `sig` when this process dies; None where the OS has no such thing."""
    if _prctl is None:
        return None
    prctl = _prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), sig)

    return preexec


class GroupGuard:
    """Kills process group `pgid` when this process dies (see the module doc)."""

    def __init__(self, watchdog: subprocess.Popen, keep_alive: int):
        self._watchdog = watchdog
        self._keep_alive = keep_alive  # the write end of the pipe: never written, closed by our death

    @classmethod
    def start(cls, pgid: int) -> "GroupGuard | None":
        shell = shutil.which("sh")
        if shell is None or os.name != "posix":
            return None
        read_end, write_end = os.pipe()  # not inheritable: no other child gets the write end
        try:
            watchdog = subprocess.Popen(
                [shell, "-c", 'read _ ; kill -KILL "-$1" 2>/dev/null', "agent-lsp-guard", str(pgid)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Its own group: a kill of the command's group must not reach it. And no
                # die_with_parent(): it would die with us before it could do its one job.
                start_new_session=True,
            )
        except OSError as e:
            os.close(write_end)
            log.warning("could not start the watchdog of process group %s: %s", pgid, e)
            return None
        finally:
            os.close(read_end)
        return cls(watchdog, write_end)

    def release(self) -> None:
        """The group is done: stop the watchdog without letting it kill anything."""
        try:
            self._watchdog.kill()
            self._watchdog.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            os.close(self._keep_alive)
        except OSError:
            pass

    @property
    def pid(self) -> int:
        return self._watchdog.pid
