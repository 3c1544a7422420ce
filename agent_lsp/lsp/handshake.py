"""A fast `initialize` answer: the result of an earlier start, replayed.

Importing pygls' type library (lsprotocol) takes most of a second, and editors
such as Emacs wait for the `initialize` result before they go on. The result
depends only on the server's code and the client's position encodings, so the
server caches it (`<platform cache dir>/agent-lsp/initialize-<key>.json`, the
key covering those and the package versions). On the next start the cached
result answers `initialize` while pygls loads; pygls then handles the same
`initialize` itself (its answer is dropped) and refreshes the cache if it
differs. Requests that arrive meanwhile wait until pygls has loaded.

The very first start has no cache yet; it answers from the template shipped
with the package (`initialize_template.json`: the result for UTF-16, keyed by
the package versions and the content of the handler module), with the
position encoding pygls would pick. A test keeps the template equal to what
pygls answers; if the key does not match (the handlers changed and the
template was not regenerated) the template is not used. Regenerate it with
`python -m agent_lsp.lsp.handshake --write-template`.

This module must not import pygls or lsprotocol.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO, Mapping

from agent_lsp import __version__

log = logging.getLogger(__name__)

DISABLE_ENV = "AGENT_LSP_NO_INIT_CACHE"
TEMPLATE_PATH = Path(__file__).with_name("initialize_template.json")
HANDLERS_PATH = Path(__file__).with_name("language_server.py")
ENCODINGS = ("utf-8", "utf-16", "utf-32")  # what pygls supports


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "agent-lsp" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "agent-lsp"
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-lsp"


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:  # a source checkout
        return "?"


def _declared_sync(params: Mapping[str, Any]) -> list[str]:
    """The text-sync options the client declared: pygls answers each with `false`
    (the server does not handle them), and leaves out the undeclared ones."""
    sync = (((params.get("capabilities") or {}).get("textDocument") or {}).get("synchronization")) or {}
    return [key for key in ("willSave", "willSaveWaitUntil") if sync.get(key) is not None]


def cache_path(params: Mapping[str, Any], env: Mapping[str, str] = os.environ) -> Path:
    """The cache file for this client: the key covers everything of the client's
    capabilities that changes pygls' answer."""
    general = (params.get("capabilities") or {}).get("general") or {}
    facts = {
        "agent_lsp": __version__,
        "pygls": _version("pygls"),
        "lsprotocol": _version("lsprotocol"),
        "positionEncodings": general.get("positionEncodings"),
        "sync": _declared_sync(params),
        "code": _code_stamp(),
    }
    key = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir(env) / f"initialize-{key}.json"


def _code_stamp() -> str:
    """Changes whenever the server's handler code changes (an editable install)."""
    here = Path(__file__).with_name("language_server.py")
    try:
        stat = here.stat()
        return f"{stat.st_size}-{stat.st_mtime_ns}"
    except OSError:
        return "?"


def template_key() -> str:
    """Changes whenever the initialize result may change: versions, handler code."""
    facts = {
        "agent_lsp": __version__,
        "pygls": _version("pygls"),
        "lsprotocol": _version("lsprotocol"),
        "handlers": hashlib.sha256(HANDLERS_PATH.read_bytes()).hexdigest(),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]


def position_encoding(params: Mapping[str, Any]) -> str:
    """The encoding pygls picks: the client's first supported preference, else UTF-16."""
    general = (params.get("capabilities") or {}).get("general") or {}
    for encoding in general.get("positionEncodings") or ():
        if encoding in ENCODINGS:
            return encoding
    return "utf-16"


def template_result(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The shipped result for this client, if the template matches this code."""
    try:
        template = json.loads(TEMPLATE_PATH.read_text(encoding="utf-8"))
        if template.get("key") != template_key():
            return None
        result = template["result"]
        result["capabilities"]["positionEncoding"] = position_encoding(params)
        for key in _declared_sync(params):
            result["capabilities"]["textDocumentSync"][key] = False
        return result
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_cached(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_cached(path: Path, result: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as error:
        log.debug("could not cache the initialize result: %s", error)


def read_message(stream: BinaryIO) -> tuple[bytes, dict[str, Any]] | None:
    """One framed JSON-RPC message: (its raw header+body bytes, the parsed body); None at EOF."""
    raw = b""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        raw += line
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1].strip())
        elif line in (b"\r\n", b"\n") and length is not None:
            break
    body = stream.read(length)
    if len(body) < length:
        return None
    raw += body
    try:
        message = json.loads(body)
    except ValueError:
        message = {}
    return raw, message if isinstance(message, dict) else {}


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class ReplayReader:
    """stdin with some already-read bytes put back in front (pygls reads them first)."""

    def __init__(self, prefix: bytes, stream: BinaryIO):
        self._prefix = prefix
        self._stream = stream

    def _take(self, n: int) -> bytes:
        taken, self._prefix = self._prefix[:n], self._prefix[n:]
        return taken

    def readline(self) -> bytes:
        if self._prefix:
            end = self._prefix.find(b"\n")
            if end >= 0:
                return self._take(end + 1)
            return self._take(len(self._prefix)) + self._stream.readline()
        return self._stream.readline()

    def read(self, n: int) -> bytes:
        if self._prefix:
            taken = self._take(n)
            return taken + (self._stream.read(n - len(taken)) if len(taken) < n else b"")
        return self._stream.read(n)


class InitializeFilter:
    """Wraps the writer: drops pygls' answer to an `initialize` we already answered,
    and keeps the cache up to date with what pygls answers."""

    def __init__(self, writer: Any, request_id: Any, cache: Path, already_answered: bool, cached: dict | None,
                 cache_is_current: bool = True):
        self._writer = writer
        self._id = request_id
        self._cache = cache
        self._answered = already_answered
        self._cached = cached
        self._cache_is_current = cache_is_current  # False: the answer came from the template
        self._waiting = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)

    def write(self, data: bytes) -> None:
        if self._waiting:
            _, _, body = data.partition(b"\r\n\r\n")
            try:
                message = json.loads(body)
            except ValueError:
                message = {}
            if isinstance(message, dict) and message.get("id") == self._id and ("result" in message or "error" in message):
                self._waiting = False
                result = message.get("result")
                if isinstance(result, dict) and (result != self._cached or not self._cache_is_current):
                    if self._answered and result != self._cached:
                        log.warning("the early initialize answer differed from pygls' answer; cache refreshed")
                    write_cached(self._cache, result)
                if self._answered:
                    return
        self._writer.write(data)

    def close(self) -> None:
        self._writer.close()


def _write_template() -> None:
    """Ask a real server (no cache) for its initialize result; store it as the template."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, **{DISABLE_ENV: "1", "AGENT_LSP_CONFIG": str(Path(tmp) / "none.toml")})
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}}}
        data = frame(init) + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"})
        out = subprocess.run([sys.executable, "-m", "agent_lsp.lsp"], input=data, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env, timeout=60, check=False).stdout
    import io

    stream = io.BytesIO(out)
    while (item := read_message(stream)) is not None:
        if item[1].get("id") == 1:
            template = {"key": template_key(), "result": item[1]["result"]}
            TEMPLATE_PATH.write_text(json.dumps(template, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            sys.stderr.write(f"wrote {TEMPLATE_PATH}\n")
            return
    raise SystemExit("the server did not answer initialize")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-template"]:
        _write_template()
    else:
        raise SystemExit("usage: python -m agent_lsp.lsp.handshake --write-template")
