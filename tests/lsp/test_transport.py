"""The stdio writer never blocks its caller, reports its backlog, and drains on close."""

import os
import threading
import time

from agent_lsp.lsp.transport import ThreadedWriter


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
