"""Transports: stdout protection and a writer that never blocks the event loop.

pygls writes stdio messages synchronously on the loop thread; a client that
reads slowly then freezes the whole server. `ThreadedWriter` hands bytes to a
writer thread instead and reports its backlog, which the relay reads to
coalesce chunks while the client catches up.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from typing import BinaryIO


def protect_stdout() -> BinaryIO:
    """Move fd 1 aside for JSON-RPC; fd 1 and sys.stdout then go to stderr, so
    no stray print, C extension or child process can corrupt the message stream."""
    rpc_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return rpc_out


class ThreadedWriter:
    """pygls' Writer interface (write/close) over a background thread."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._queue: collections.deque[bytes] = collections.deque()
        self._pending = 0
        self._lock = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="agent-lsp-writer", daemon=True)
        self._thread.start()

    @property
    def backlog(self) -> int:
        """Bytes accepted but not yet written to the stream."""
        return self._pending

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._closed:
                return
            self._queue.append(data)
            self._pending += len(data)
            self._lock.notify()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._lock.wait()
                if not self._queue and self._closed:
                    return
                batch = b"".join(self._queue)
                self._queue.clear()
            try:
                self._stream.write(batch)
                self._stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                with self._lock:
                    self._closed = True
                    self._queue.clear()
                    self._pending = 0
                return
            with self._lock:
                self._pending -= len(batch)
                self._lock.notify_all()

    def drain(self, timeout: float = 2.0) -> None:
        """Wait until everything queued has been written (or the timeout)."""
        with self._lock:
            self._lock.wait_for(lambda: self._pending == 0 or self._closed, timeout)

    def close(self) -> None:
        self.drain()
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._thread.join(timeout=2.0)
        try:
            self._stream.close()
        except OSError:
            pass
