"""The host side of the sandbox's network allow list: a small HTTP proxy.

A sandboxed command has no network of its own (only a loopback). When
`shell.allowedDomains` lists hosts, the sandbox gets this proxy's Unix socket
and an in-sandbox bridge (`bridge.py`) that serves it on the sandbox's
loopback; the command sees `HTTP_PROXY`/`HTTPS_PROXY` pointing there. The
proxy answers two kinds of request:

- `CONNECT host:port` (HTTPS, and anything tunnelled): a tunnel, when the host
  is allowed;
- a plain HTTP request with an absolute URL (`GET http://host/path`): passed
  on (one request per connection), when the host is allowed.

Any other host is refused with `403` and a text saying why; the refusal is
recorded, so run_command's result can name the host the sandbox refused.
The host name is resolved here, outside the sandbox, after the check: an
allowed name is what is reached, whatever it resolves to.

Written here rather than taken from a library: the proxies on PyPI
(proxy.py, mitmproxy, pproxy) are full servers with plugins, TLS
interception or their own event loop; this needs a host check, CONNECT and
one plain request, about a hundred lines of asyncio. It runs in a thread of
its own (its own event loop), so any caller (run_command, hooks, a language
server's launcher, a test) can use it without sharing a loop.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import ipaddress
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence
from urllib.parse import urlsplit

from agent_lsp.sandbox.domains import host_allowed, normalize_host

HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT_S = 30.0
_HOP_HEADERS = {b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive", b"host"}
_NOT_HOST = re.compile(r"[^a-z0-9._:*\[\]-]")


def shown_host(host: str) -> str:
    """The host as the command wrote it, safe to show: a character no host name has
    (a control character, an escape sequence) becomes "?"."""
    return _NOT_HOST.sub("?", host)[:253]


def refusal_text(host: str) -> str:
    return f"blocked by the sandbox: {host} is not in shell.allowedDomains"


@dataclass
class ProxyEndpoint:
    """One listening socket for one allow list."""

    allowed: tuple[str, ...]
    socket_path: Path
    refusals: collections.deque = field(default_factory=lambda: collections.deque(maxlen=200))

    @property
    def folder(self) -> Path:
        return self.socket_path.parent

    def refused_since(self, since: float) -> list[str]:
        """The hosts refused since `since` (time.monotonic()), each once, in order."""
        seen: dict[str, None] = {}
        for at, host in list(self.refusals):
            if at >= since:
                seen.setdefault(host, None)
        return list(seen)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CONNECT_TIMEOUT_S)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError):
                return
            line, _, rest = head.partition(b"\r\n")
            parts = line.split()
            if len(parts) != 3:
                return await _answer(writer, 400, "not an HTTP proxy request")
            method, target, version = parts
            if method.upper() == b"CONNECT":
                host, port = _host_port(target.decode("latin-1"), 443)
                forward = b""
            else:
                url = urlsplit(target.decode("latin-1"))
                if url.scheme != "http" or not url.hostname:
                    return await _answer(writer, 400, "the proxy takes CONNECT, or an http:// URL")
                host, port = normalize_host(url.hostname), url.port or 80
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
                name = f"[{host}]" if ":" in host else host
                shown = name if url.port in (None, 80) else f"{name}:{url.port}"
                forward = b" ".join([method, path.encode("latin-1"), version]) + b"\r\n" + _end_to_end(rest, shown)
            if not host or port is None:
                return await _answer(writer, 400, "no host to connect to")
            if not host_allowed(host, self.allowed):
                self.refusals.append((time.monotonic(), shown_host(host)))
                return await _answer(writer, 403, refusal_text(shown_host(host)))
            try:
                addresses = await asyncio.wait_for(_resolve(host, port), CONNECT_TIMEOUT_S)
                refused = local_refusal(host, addresses, self.allowed)
                if refused:
                    self.refusals.append((time.monotonic(), shown_host(host)))
                    return await _answer(writer, 403, f"blocked by the sandbox: {refused}")
                up_reader, upstream = await asyncio.wait_for(_connect(addresses, port), CONNECT_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError) as error:
                return await _answer(writer, 502, f"could not reach {host}:{port}: {error}")
            if forward:
                upstream.write(forward)
            else:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            for w in (upstream, writer):
                if w is not None:
                    w.close()


async def _resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


async def _connect(addresses: list[str], port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The first address that answers: the ones checked, not a second lookup (which DNS could answer otherwise)."""
    error: OSError = OSError(f"no address for port {port}")
    for address in addresses:
        try:
            return await asyncio.open_connection(address, port)
        except OSError as failed:
            error = failed
    raise error


def local_refusal(host: str, addresses: list[str], allowed: Sequence[str]) -> str | None:
    """Why a host name must not be reached at these addresses, or None. A name that
    resolves to this machine (loopback, unspecified) is refused unless the allow list
    names it exactly; one that resolves to link-local addresses (a cloud's metadata
    service) always: DNS someone else controls must not lead a command back into the
    machine. An allowed IP address is what the user wrote: reached as it is."""
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if ip.is_link_local:
            return f"{shown_host(host)} resolves to a link-local address ({ip})"
        if (ip.is_loopback or ip.is_unspecified) and host not in allowed:
            return f"{shown_host(host)} resolves to this machine ({ip}); allow it by its exact name to reach it"
    return None


def _host_port(target: str, default: int) -> tuple[str, int | None]:
    host, sep, port = target.rpartition(":")
    if not sep or "]" in port:
        return normalize_host(target), default
    return normalize_host(host), int(port) if port.isdigit() and 0 < int(port) < 65536 else None


def _end_to_end(head: bytes, host: str) -> bytes:
    """The request's headers without the hop-by-hop ones, closing after one answer; the
    Host header is the allowed host's (no other site behind the same address is asked)."""
    kept = [h for h in head.split(b"\r\n") if h and h.split(b":", 1)[0].strip().lower() not in _HOP_HEADERS]
    return b"\r\n".join([b"Host: " + host.encode("ascii", "replace"), *kept, b"Connection: close", b"", b""])


async def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode("utf-8")
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1") + body)
    await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.close()


class _ProxyThread:
    """The event loop the endpoints live in, in a daemon thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.endpoints: dict[tuple[str, ...], ProxyEndpoint] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self.loop.run_forever, name="sandbox-proxy", daemon=True).start()

    def endpoint(self, allowed: tuple[str, ...]) -> ProxyEndpoint:
        with self.lock:
            found = self.endpoints.get(allowed)
            if found is None:
                found = ProxyEndpoint(allowed, _socket_folder() / "proxy.sock")
                asyncio.run_coroutine_threadsafe(self._listen(found), self.loop).result(timeout=10)
                self.endpoints[allowed] = found
            return found

    async def _listen(self, endpoint: ProxyEndpoint) -> None:
        await asyncio.start_unix_server(endpoint.handle, path=str(endpoint.socket_path), limit=HEAD_LIMIT)

    def close(self) -> None:
        for endpoint in self.endpoints.values():
            shutil.rmtree(endpoint.folder, ignore_errors=True)


def _socket_folder() -> Path:
    """A private folder (0700) for the socket: the user's runtime folder (never
    visible in the sandbox), else the temp folder (covered in the sandbox)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = runtime if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK) else tempfile.gettempdir()
    if len(base) > MAX_BASE_CHARS:  # a socket's path holds about 104 bytes: a deep TMPDIR does not fit
        base = "/tmp"
    return Path(tempfile.mkdtemp(prefix="agent-lsp-net-", dir=base))


MAX_BASE_CHARS = 60  # + "/agent-lsp-net-XXXXXXXX/proxy.sock" stays under sun_path's 104-108 bytes


_thread: _ProxyThread | None = None
_started = threading.Lock()


def proxy_endpoint(allowed: Sequence[str]) -> ProxyEndpoint:
    """The running proxy for this allow list (started on first use, kept for the process)."""
    global _thread
    with _started:
        if _thread is None:
            _thread = _ProxyThread()
            atexit.register(_thread.close)
    return _thread.endpoint(tuple(allowed))
