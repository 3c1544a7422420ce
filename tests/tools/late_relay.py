"""Runs a language server with some of its messages held back, as a loaded
machine holds them: pyright sends a check's progress `begin` only after our
reply to its `window/workDoneProgress/create`, and behind the first reports of
that check when its main thread is busy; and a server slow to ask for its
settings (`workspace/configuration`) starts its first check after the first
files were opened.

    python late_relay.py METHOD=SECONDS [METHOD=SECONDS ...] -- COMMAND [ARGS...]

Every other message passes at once, in both directions; held messages keep
their order among themselves.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time


def frames(stream):
    while True:
        length = None
        while True:
            line = stream.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        yield stream.read(length)


def main() -> None:
    split = sys.argv.index("--")
    delays = {method: float(seconds) for method, _, seconds in (a.rpartition("=") for a in sys.argv[1:split])}
    server = subprocess.Popen(sys.argv[split + 1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = sys.stdout.buffer
    lock = threading.Lock()
    held: queue.Queue = queue.Queue()

    def send(body: bytes) -> None:
        with lock:
            out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            out.flush()

    def to_server() -> None:
        for chunk in iter(lambda: sys.stdin.buffer.read1(65536), b""):
            server.stdin.write(chunk)
            server.stdin.flush()
        server.stdin.close()

    def release() -> None:
        while True:
            due, body = held.get()
            time.sleep(max(0.0, due - time.monotonic()))
            send(body)

    threading.Thread(target=to_server, daemon=True).start()
    threading.Thread(target=release, daemon=True).start()
    for body in frames(server.stdout):
        method = json.loads(body).get("method")
        if method in delays:
            held.put((time.monotonic() + delays[method], body))
        else:
            send(body)
    sys.exit(server.wait())


if __name__ == "__main__":
    main()
