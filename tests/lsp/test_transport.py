"""The stdio writer never blocks its caller, reports its backlog, and drains on close."""

import io
import os
import threading
import time

from agent_lsp.lsp.transport import FrameReader, Oversized, ThreadedWriter


def test_writes_to_a_reader_that_is_not_reading_do_not_block():
    read_fd, write_fd = os.pipe()
    writer = ThreadedWriter(os.fdopen(write_fd, "wb", buffering=0))
    started = time.monotonic()
    for _ in range(200):
        writer.write(b"x" * 10_000)  # 2 MB: far more than a pipe holds
    assert time.monotonic() - started < 0.5
    assert writer.backlog > 0  # the pipe is full: the relay sees the client is behind

    received = bytearray()

    def read_all():
        with os.fdopen(read_fd, "rb") as reader:
            while chunk := reader.read(65536):
                received.extend(chunk)

    reader_thread = threading.Thread(target=read_all)
    reader_thread.start()
    writer.close()  # drains everything, then closes the pipe
    reader_thread.join(timeout=5)
    assert len(received) == 2_000_000 and writer.backlog == 0


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_frames_already_received_are_ready_and_a_partial_one_is_not():
    """The server's reader hands what arrived together to the loop at once:
    `ready` says a whole next message is already read, never one still coming."""
    read_fd, write_fd = os.pipe()
    frames = FrameReader(os.fdopen(read_fd, "rb"))
    burst = b"".join(frame(b'{"id":%d}' % i) for i in range(10))
    os.write(write_fd, burst + frame(b'{"id":10}')[:-3])
    bodies = [frames.read()]
    while frames.ready():
        bodies.append(frames.read())
    assert bodies == [b'{"id":%d}' % i for i in range(10)]
    assert not frames.ready()  # the eleventh is cut: reading it would wait
    os.write(write_fd, b'10}')
    os.close(write_fd)
    assert frames.read() == b'{"id":10}'
    assert frames.read() is None  # end of input


def test_a_lying_header_is_skipped_without_its_memory_and_reading_goes_on():
    stream = io.BytesIO(b"Content-Length: 99999999999\r\n\r\nnot that much\n" + frame(b"{}") + frame(b"[]"))
    frames = FrameReader(stream, limit=1000)
    skipped = frames.read()
    assert isinstance(skipped, Oversized) and skipped.length == 99999999999
    assert frames.read() == b"{}"
    assert frames.read() == b"[]"
    assert frames.read() is None
