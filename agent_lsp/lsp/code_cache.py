"""The methods attrs generates for lsprotocol's classes, compiled once and kept.

pygls needs lsprotocol's type library: about 560 attrs classes, for each of
which attrs writes `__init__`, `__eq__`, `__repr__`, ... as source text and
compiles it. Compiling is half of the import, the largest single cost of a
server start. Python caches the bytecode of modules (`.pyc`), not of code made
at run time, so this module does that for attrs while the server loads: each
`compile` attrs asks for is looked up by its exact source text, file name and
mode in `<platform cache dir>/agent-lsp/attrs-code-<python>.marshal`, and
compiled only when missing. The file is written again when a start needed a
class the file lacks or left entries unused (another attrs or lsprotocol
version), so it holds what the last start needed. A class whose source
differs at every start (a hashable frozen class: attrs writes a salted
`hash()` of its name into `__hash__`, and string hashes are randomised per
process) is compiled at each start without rewriting the 1.8 MB file each
time, which cost more than the whole cache saves on such a class. No hand step: the
first start writes it, any later start with other code simply compiles what
it does not find. A lookup by the full source text cannot return code for
other source. `AGENT_LSP_NO_INIT_CACHE=1` turns it off with the `initialize`
cache (`agent_lsp.lsp.handshake`).

This module must not import pygls or lsprotocol.
"""

from __future__ import annotations

import __future__
import contextlib
import importlib.util
import logging
import marshal
import os
import sys
from pathlib import Path
from typing import Any, Iterator

from agent_lsp.lsp.handshake import DISABLE_ENV, cache_dir

log = logging.getLogger(__name__)


def cache_path() -> Path:
    # marshal's format is the interpreter's: one file per Python version.
    return cache_dir() / f"attrs-code-{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}.marshal"


@contextlib.contextmanager
def attrs_code_cache(path: Path | None = None) -> Iterator[None]:
    """While the body runs (the import of the server), attrs' generated methods
    come from the cache when their source is there."""
    try:
        import attr._make as make
    except ImportError:
        make = None
    if make is None or os.environ.get(DISABLE_ENV) or "compile" in vars(make):
        yield
        return
    path = path or cache_path()
    known = _read(path)
    used: dict[tuple[str, str, str], Any] = {}
    # attrs compiles with the future flags of its own module; so do we, exactly
    flags = __future__.annotations.compiler_flag if getattr(make, "annotations", None) is __future__.annotations else 0

    def compile_cached(source: Any, filename: str, mode: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not isinstance(source, str):
            return compile(source, filename, mode, *args, **kwargs)
        key = (source, filename, mode)
        code = known.get(key)
        if code is None:
            code = compile(source, filename, mode, flags, True)
        used[key] = code
        return code

    make.compile = compile_cached  # shadows the builtin for attrs' module only
    try:
        yield
    finally:
        del make.compile
    if used and {key[1:] for key in used} != {key[1:] for key in known}:
        _write(path, used)


def _read(path: Path) -> dict[tuple[str, str, str], Any]:
    try:
        with open(path, "rb") as f:
            known = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return known if isinstance(known, dict) else {}


def _write(path: Path, entries: dict[tuple[str, str, str], Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            marshal.dump(entries, f)
        os.replace(tmp, path)
    except (OSError, ValueError) as error:
        log.debug("could not write the attrs code cache: %s", error)
