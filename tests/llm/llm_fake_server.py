"""A real HTTP/1.1 server on 127.0.0.1 that replays recorded SSE streams.

Each incoming request takes the next queued `Reply`: a status, headers and
body parts written one by one (chunked transfer encoding, a flush and a
loop turn between parts, so the client sees the awkward boundaries), then
an ending: a clean end, a TCP reset, a stall until the client hangs up, or
a close without the final chunk. Requests are recorded for assertions, and
each connection's hang-up time is recorded for the cancellation tests.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

RECORDINGS = Path(__file__).parent / "recordings"
MODEL_PATHS = ("/chat/completions", "/messages")


def recording(name: str) -> bytes:
    return (RECORDINGS / name).read_bytes()


def awkward_parts(data: bytes, sizes: tuple[int, ...] = (1, 3, 7, 2, 13, 5, 31)) -> list[bytes]:
    """Cut `data` into small pieces of cycling sizes: the cuts land mid-line,
    mid-JSON, inside multi-byte UTF-8 characters and between \\r and \\n."""
    parts, at, i = [], 0, 0
    while at < len(data):
        size = sizes[i % len(sizes)]
        parts.append(data[at : at + size])
        at += size
        i += 1
    return parts


@dataclass
class Reply:
    status: int = 200
    parts: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    delay_s: float = 0.0  # between parts
    end: Literal["ok", "reset", "stall", "close"] = "ok"

    @classmethod
    def sse(cls, data: bytes, *, awkward: bool = True, **kw: Any) -> "Reply":
        return cls(parts=awkward_parts(data) if awkward else [data], **kw)

    @classmethod
    def openai_text(cls, text: str, *, usage: dict[str, int] | None = None) -> "Reply":
        """An OpenAI chat-completions stream answering `text`; `usage`, if given, in a last chunk."""
        chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"content": text}}]},
                                        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
        if usage is not None:
            chunks.append({"choices": [], "usage": usage})
        return cls.sse(b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n")

    @classmethod
    def json(cls, status: int, body: Any, headers: dict[str, str] | None = None) -> "Reply":
        return cls(
            status=status,
            parts=[json.dumps(body).encode()],
            headers={"content-type": "application/json", **(headers or {})},
        )


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Seen] = []  # model requests; each takes the next queued reply
        self.routes: dict[str, Reply] = {}  # "GET /props" -> the answer to every other request
        self.respond: Callable[[Seen], Reply] | None = None  # answers model requests instead of the queue
        self.probes: list[Seen] = []
        self.hangups: list[float] = []  # monotonic time each connection was closed by the client
        self.hangup = asyncio.Event()
        self.stall_started = asyncio.Event()
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        try:
            await asyncio.wait_for(self._server.wait_closed(), 2)
        except (TimeoutError, asyncio.TimeoutError):
            pass

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                if not path.endswith(MODEL_PATHS):  # e.g. a context-window probe: answered from `routes`
                    self.probes.append(Seen(method, path, headers, body))
                    reply = self.routes.get(f"{method} {path}") or Reply.json(404, {"error": "not found"})
                else:
                    seen = Seen(method, path, headers, body)
                    self.requests.append(seen)
                    if self.respond is not None:
                        reply = self.respond(seen)
                    else:
                        reply = self.replies.popleft() if self.replies else Reply.json(500, {"error": {"message": "no reply queued"}})
                if not await self._reply(reply, reader, writer):
                    break
        finally:
            self.hangups.append(time.monotonic())
            self.hangup.set()
            writer.close()

    async def _reply(self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Write one response; False when the connection must end."""
        head = [f"HTTP/1.1 {reply.status} X", "transfer-encoding: chunked"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        try:
            for part in reply.parts:
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
                await asyncio.sleep(reply.delay_s)
            if reply.end == "ok":
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                return True
            if reply.end == "reset":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return False
            if reply.end == "stall":
                self.stall_started.set()
                await reader.read()  # until the client hangs up
                return False
            return False  # "close": the body ends without its final chunk
        except ConnectionError:
            return False
