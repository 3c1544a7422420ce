"""A fast `initialize` answer: the result of an earlier start, replayed.

Importing pygls' type library (lsprotocol) takes most of a second, and editors
such as Emacs wait for the `initialize` result before they go on. The result
depends only on the installed code (ours, pygls, lsprotocol) and on the client
capabilities that change pygls' answer, so each start caches pygls' answer
(`<platform cache dir>/agent-lsp/initialize-<key>.json`). A later start with
the same key answers `initialize` from the cache while pygls loads; pygls then
handles the same `initialize` itself, its answer is dropped (and replaces the
cache if it differs), and from then on messages flow straight between pygls and
the transport. Requests that arrive meanwhile wait until pygls has loaded. The
first start after an install, an upgrade or an edit of `agent_lsp/lsp` has no
cache yet and answers once pygls has loaded.

The key is computed from file names, sizes and modification times (no import
of pygls, no hashing of file contents): any change of the code makes a new key.

This module must not import pygls or lsprotocol.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from agent_lsp import __version__

log = logging.getLogger(__name__)

DISABLE_ENV = "AGENT_LSP_NO_INIT_CACHE"
SERVER_CODE = Path(__file__).parent  # agent_lsp/lsp: the handlers, whose registrations make the capabilities


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "agent-lsp" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "agent-lsp"
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-lsp"


def _declared_sync(params: Mapping[str, Any]) -> list[str]:
    """The text-sync options the client declared: pygls answers each with `false`
    (the server does not handle them), and leaves out the undeclared ones."""
    sync = (((params.get("capabilities") or {}).get("textDocument") or {}).get("synchronization")) or {}
    return [key for key in ("willSave", "willSaveWaitUntil") if sync.get(key) is not None]


def cache_path(params: Mapping[str, Any], env: Mapping[str, str] = os.environ) -> Path:
    """The cache file for this code and this client: the key covers everything
    that changes pygls' answer."""
    general = (params.get("capabilities") or {}).get("general") or {}
    facts = {
        "agent_lsp": __version__,
        "code": _files_stamp(SERVER_CODE),
        "pygls": _package_stamp("pygls"),
        "lsprotocol": _package_stamp("lsprotocol"),
        "positionEncodings": general.get("positionEncodings"),
        "sync": _declared_sync(params),
    }
    key = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir(env) / f"initialize-{key}.json"


def _files_stamp(directory: Path) -> list[tuple[str, int, int]]:
    """Name, size and mtime of every Python file under `directory`: changes with any edit."""
    stamp = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                try:
                    stat = os.stat(path)
                except OSError:
                    continue
                stamp.append((os.path.relpath(path, directory), stat.st_size, stat.st_mtime_ns))
    return stamp


def _package_stamp(package: str) -> list[Any]:
    """Where an installed package is, its version (the name of its dist-info
    folder) and its `__init__.py`'s size and mtime; found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return [package]
    origin = Path(spec.origin)
    try:
        stat = origin.stat()
        site = origin.parent.parent
        dists = sorted(n for n in os.listdir(site) if n.startswith(f"{package}-") and n.endswith(".dist-info"))
    except OSError:
        return [str(origin)]
    return [str(origin), stat.st_size, stat.st_mtime_ns, dists]


def read_cached(path: Path) -> dict[str, Any] | None:
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return cached if isinstance(cached, dict) else None


def write_cached(path: Path, result: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(result, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as error:
        log.debug("could not cache the initialize result: %s", error)


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class EarlyInitialize:
    """An `initialize` request seen before pygls has loaded, answered from the
    cache if there is one."""

    def __init__(self, request_id: Any, cache: Path, answered: dict[str, Any] | None):
        self.request_id = request_id
        self.cache = cache
        self.answered = answered  # the result sent early; None: pygls answers

    @classmethod
    def answer(cls, body: bytes, writer: Any) -> EarlyInitialize | None:
        """The first message's body: if it is `initialize`, answer it from the cache if possible."""
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
            return None
        params = message.get("params")
        cache = cache_path(params if isinstance(params, dict) else {})
        cached = read_cached(cache)
        if cached is not None:
            writer.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": cached}))
        return cls(message["id"], cache, cached)


class InitializeFilter:
    """pygls' writer until pygls has answered the early `initialize`: drops that
    answer if the cache already gave it, and caches what pygls answers. Then it
    puts the real writer back, and leaves the I/O path."""

    def __init__(self, writer: Any, protocol: Any, early: EarlyInitialize):
        self._writer = writer
        self._protocol = protocol
        self._early = early

    def write(self, data: bytes) -> None:
        _, _, body = data.partition(b"\r\n\r\n")
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        early = self._early
        if not (isinstance(message, dict) and message.get("id") == early.request_id and "method" not in message):
            self._writer.write(data)
            return
        self._protocol.set_writer(self._writer)
        result = message.get("result")
        if isinstance(result, dict) and result != early.answered:
            if early.answered is not None:
                log.warning("the cached initialize answer differed from pygls' answer; cache refreshed")
            write_cached(early.cache, result)
        if early.answered is None:
            self._writer.write(data)

    def close(self) -> None:
        self._writer.close()
