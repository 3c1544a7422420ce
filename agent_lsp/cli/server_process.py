"""What the server's process does around the language server: signals, memory,
and no shell command left running when it ends.

The running shell commands are in their own process groups (so a cancel kills
all they started); that also means they would outlive the server unless it
kills them on the way out: after `exit`, at end of input, and on SIGTERM.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
from typing import Any


class ServerProcess:
    """The server's process (`agent_lsp.lsp.language_server.ProcessPort`)."""

    def __init__(self) -> None:
        self._commands_may_run = False

    def agent_code_loaded(self) -> None:
        release_free_memory()
        # What start-up made (modules, classes, schemas: most of the heap) lives
        # as long as the process: out of the collector's sight, a full collection
        # no longer walks it (tens of ms, paid by whichever request was running).
        gc.freeze()

    def host_built(self) -> None:
        self._commands_may_run = True

    def release_memory(self) -> None:
        release_free_memory()

    def kill_running_commands(self) -> None:
        """Kill the agent's running shell commands (their process groups). Only a
        workspace host runs commands: without one there is nothing to kill (and
        the tools, ~0.3 s to import, are not imported just to find that out)."""
        if not self._commands_may_run:
            return
        from agent_lsp.tools.shell import kill_running_commands

        kill_running_commands(sweep_children=True)

    def install_sigterm_handler(self) -> None:
        """On SIGTERM, kill the running shell commands, then die of SIGTERM as before."""
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)

        def on_sigterm(signum: int, frame: Any) -> None:
            self.kill_running_commands()
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGTERM, on_sigterm)

    def end(self, code: int) -> None:
        """Leave now, without joining threads: the stdin reader may still block on a
        read the client never ends."""
        self.kill_running_commands()
        logging.shutdown()
        sys.stderr.flush()
        os._exit(code)


def release_free_memory() -> None:
    """Collect import-time garbage and hand freed heap pages back to the OS (glibc),
    so an idle server stays small."""
    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
