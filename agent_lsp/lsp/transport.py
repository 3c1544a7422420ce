"""Transports: stdout protection, a writer that never blocks the event loop,
and a frame reader that never trusts a header with its memory.

pygls writes stdio messages synchronously on the loop thread; a client that
reads slowly then freezes the whole server. `ThreadedWriter` hands bytes to a
writer thread instead and reports its backlog, which the relay reads to
coalesce chunks while the client catches up.
"""

from __future__ import annotations

import collections
import os
import re
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


MAX_MESSAGE_BYTES = 64 * 2**20  # a message body larger than this is skipped, not read
MAX_HEADER_LINE = 8192
_SKIP_CHUNK = 65536
_READ_SIZE = 65536
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:[ \t]*(\d+)[ \t]*\r?$")


class Oversized:
    """A frame whose body was too large to read: it was skipped."""

    def __init__(self, length: int):
        self.length = length


class FrameReader:
    """Reads `Content-Length` framed messages from a byte stream, in bounded memory.

    pygls' reader trusts the header: `Content-Length: 99999999999` makes it
    allocate the body and die of MemoryError. Here a body over `limit` bytes is
    skipped without being kept (`Oversized` is returned so the caller can say
    so); if a new `Content-Length` header line shows up while skipping, the
    header lied and reading goes on from there.

    It keeps what one read of the stream brought (`read1`: all the client had
    written, waiting only when there is nothing), so `ready` can tell that the
    next message is already here: the server's reader thread hands a burst of
    messages to the event loop at once instead of one per turn of the loop."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_MESSAGE_BYTES):
        self._stream = stream
        self._limit = limit
        self._pending: bytes | None = None  # a header line found while skipping
        self._buffer = bytearray()
        self._ended = False

    def read(self) -> bytes | Oversized | None:
        """The next message body; None at end of input."""
        while True:
            length = self._read_header()
            if length is None:
                return None
            if length <= self._limit:
                body = self._read(length)
                if len(body) < length:
                    return None
                return body
            if self._skip(length):
                return Oversized(length)
            return None  # end of input while skipping

    def ready(self) -> bool:
        """Whether the next message is whole in what was already read, so `read`
        returns it without waiting (False when unsure)."""
        buffer = self._buffer
        end = buffer.find(b"\r\n\r\n")
        if self._pending is not None or end < 0:
            return False
        match = _CONTENT_LENGTH.search(buffer, 0, end)
        return match is not None and int(match[1]) <= min(self._limit, len(buffer) - end - 4)

    def _fill(self) -> bool:
        """Keep what one read of the stream brings; False at end of input."""
        if self._ended:
            return False
        data = self._stream.read1(_READ_SIZE)
        if not data:
            self._ended = True
            return False
        self._buffer += data
        return True

    def _readline(self, limit: int) -> bytes:
        """Up to and including the next b"\\n", at most `limit` bytes."""
        buffer = self._buffer
        scanned = 0
        while (end := buffer.find(b"\n", scanned, limit)) < 0 and len(buffer) < limit:
            scanned = len(buffer)
            if not self._fill():
                end = len(buffer) - 1
                break
        size = min(end + 1, limit) if end >= 0 else limit
        line = bytes(buffer[:size])
        del buffer[:size]
        return line

    def _read(self, size: int) -> bytes:
        buffer = self._buffer
        if len(buffer) < size and not self._ended:
            buffer += self._stream.read(size - len(buffer))  # a large body: one read, not many
        body = bytes(buffer[:size])
        del buffer[:size]
        return body

    def _read_header(self) -> int | None:
        length: int | None = None
        while True:
            if self._pending is not None:
                line, self._pending = self._pending, None
            else:
                line = self._readline(MAX_HEADER_LINE)
            if not line:
                return None
            name, sep, value = line.partition(b":")
            if sep and name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
                if length is not None and length < 0:
                    length = None
            elif not line.strip() and length is not None:
                return length

    def _skip(self, length: int) -> bool:
        """Drop `length` bytes (False at end of input), or stop at a header line."""
        at_line_start = True
        while length > 0:
            chunk = self._readline(min(length, _SKIP_CHUNK))
            if not chunk:
                return False
            if at_line_start and chunk[:15].lower() == b"content-length:":
                self._pending = chunk
                return True
            at_line_start = chunk.endswith(b"\n")
            length -= len(chunk)
        return True
