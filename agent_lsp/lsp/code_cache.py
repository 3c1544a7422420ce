"""The code made at run time while the server loads, compiled once and kept.

pygls needs lsprotocol's type library: about 560 attrs classes, for each of
which attrs writes `__init__`, `__eq__`, `__repr__`, ... as source text and
compiles it. Compiling is half of the import, the largest single cost of a
server start. Likewise every string annotation that `typing` turns into a
forward reference (lsprotocol's `Union["Location", ...]`, each field of our
pydantic models: about 1,500 at a start) is compiled on the spot. Python
caches the bytecode of modules (`.pyc`), not of code made at run time, so
this module does that for attrs and typing while the server loads: each
`compile` they ask for is looked up by its exact source text, file name and
mode in `<platform cache dir>/agent-lsp/start-code2-<python>-<modules>.marshal`,
and compiled only when missing (each entry's code is marshalled on its own and
unmarshalled when asked for). typing's forward references have a file of
their own: the server's first answers (`agent_lsp.lsp.early`) need them from
the first message on, before pygls loads, and reading that small file costs
under a millisecond, where attrs' code (most of the bytes) is read by the
thread that loads pygls. The file is written again when a start needed
code the file lacks or left entries unused (another attrs or lsprotocol
version, other models), so it holds what the last start needed. A class
whose source differs at every start (a hashable frozen class: attrs writes a
salted `hash()` of its name into `__hash__`, and string hashes are randomised
per process) is compiled at each start without rewriting the file each time,
which cost more than the whole cache saves on such a class. No hand step: the
first start writes it, any later start with other code simply compiles what
it does not find. A lookup by the full source text cannot return code for
other source. `AGENT_LSP_NO_INIT_CACHE=1` turns it off with the early phase
(`agent_lsp.lsp.server`).

This module must not import pygls or lsprotocol.
"""

from __future__ import annotations

import __future__
import contextlib
import importlib
import importlib.util
import linecache
import logging
import marshal
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, Mapping

log = logging.getLogger(__name__)

DISABLE_ENV = "AGENT_LSP_NO_INIT_CACHE"  # set: no code cache, and no early phase (`agent_lsp.lsp.server`)
COMPILING_MODULES = ("attr._make", "typing")  # whose calls of `compile` are looked up
ATTRS_FILE_PREFIX = "<attrs generated"  # the file names attrs compiles its methods with
FORWARD_REF_FILE = "<string>"  # the file name typing compiles a forward reference with

Key = tuple[str, str, str]  # source, file name, mode
FORMAT = 2  # each entry's code marshalled on its own
# The files of earlier formats, and the `initialize` answers earlier versions cached.
OLD_FILES = ("attrs-code-*.marshal", "start-code-*.marshal", "initialize-*.json")


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The user's cache folder of agent-lsp (the demo's folder is in it too)."""
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "agent-lsp" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "agent-lsp"
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-lsp"


def cache_path(modules: tuple[str, ...] = COMPILING_MODULES) -> Path:
    # marshal's format is the interpreter's: one file per Python version. One file
    # per set of modules: the forward references are needed from the first
    # message on, attrs' code (most of the bytes) only by the loader.
    names = "-".join(modules)
    return cache_dir() / f"start-code{FORMAT}-{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}-{names}.marshal"


class StartCodeCache:
    """The code `modules` compile, looked up in one file between `open` and `close`
    (`close` writes the file if this start needed other code than it held)."""

    def __init__(self, modules: tuple[str, ...] = COMPILING_MODULES, path: Path | None = None):
        self.modules = modules
        self.path = path or cache_path(modules)
        self._patched: list[ModuleType] = []
        self._known: dict[Key, Any] = {}
        self._used: dict[Key, Any] = {}

    def open(self) -> StartCodeCache:
        if os.environ.get(DISABLE_ENV):
            return self
        modules = [module for module in map(_module, self.modules) if module is not None and "compile" not in vars(module)]
        if not modules:
            return self
        self._known = _read(self.path)
        for module in modules:
            module.compile = _cached_compile(module, self._known, self._used)  # shadows the builtin for that module only
        self._patched = modules
        return self

    def close(self) -> None:
        if not self._patched:
            return
        for module in self._patched:
            del module.compile
        self._patched = []
        used, known = self._used, self._known
        self._used, self._known = {}, {}  # the code lives on in what it made; the cache's copies go
        if used and {_identity(key) for key in used} != {_identity(key) for key in known}:
            _write(self.path, used)


@contextlib.contextmanager
def start_code_cache(path: Path | None = None, modules: tuple[str, ...] = COMPILING_MODULES) -> Iterator[None]:
    """While the body runs (the import of the server), the code `modules` compile
    comes from the cache when its source is there."""
    cache = StartCodeCache(modules, path).open()
    try:
        yield
    finally:
        cache.close()


def forget_generated_sources() -> None:
    """Drop the source text attrs keeps of every method it made (in `linecache`,
    for tracebacks: 1.5 MB for lsprotocol's classes, never released). A traceback
    through such a method then names it without quoting its line."""
    for filename in [name for name in linecache.cache if name.startswith(ATTRS_FILE_PREFIX)]:
        del linecache.cache[filename]


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _cached_compile(module: ModuleType, known: dict[Key, Any], used: dict[Key, Any]) -> Any:
    # Both compile with the future flags of their own module; so do we, exactly.
    flags = __future__.annotations.compiler_flag if getattr(module, "annotations", None) is __future__.annotations else 0

    def compile_cached(source: Any, filename: str, mode: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not isinstance(source, str):
            return compile(source, filename, mode, *args, **kwargs)
        key = (source, filename, mode)
        code = used.get(key)
        if code is None:
            code = _load(known.get(key)) or compile(source, filename, mode, flags, True)
            used[key] = code
        return code

    return compile_cached


def _load(blob: Any) -> Any:
    """The code marshalled in one entry. Entries are unmarshalled one by one, when
    asked for: code made from the whole file at once stayed spread over memory
    the interpreter could not give back (0.5 MB more at idle, measured)."""
    try:
        return marshal.loads(blob) if isinstance(blob, bytes) else None
    except (EOFError, ValueError, TypeError):
        return None


def _identity(key: Key) -> Any:
    """What names an entry from one start to the next: a forward reference is its
    source; attrs' file name names the class and method (its source may hold a
    salted hash, see above)."""
    return key if key[1] == FORWARD_REF_FILE else key[1:]


def _read(path: Path) -> dict[Key, Any]:
    try:
        # One read, then `loads`: `marshal.load` on a file reads it in small pieces,
        # which took three times as long as the decoding itself.
        known = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return known if isinstance(known, dict) else {}


def _write(path: Path, entries: dict[Key, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            marshal.dump({key: marshal.dumps(code) for key, code in entries.items()}, f)
        os.replace(tmp, path)
        for pattern in OLD_FILES:
            for old in path.parent.glob(pattern):
                old.unlink()
    except (OSError, ValueError) as error:
        log.debug("could not write the start-up code cache: %s", error)
