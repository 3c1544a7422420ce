"""Where a language server we start runs: in the command sandbox where one works.

A language server runs project code (typescript-language-server loads the
project's TypeScript and its plugins, gopls runs the go command, others run
build scripts), so it gets what a sandboxed command gets
(`agent_lsp.sandbox`, the `shell` settings, docs/sandbox.md): writes only to
the workspace, the temp folder, `shell.writablePaths` and the cache folders in
$HOME the server keeps across runs (below); the user's home hidden but for the
toolchains; no secret; network only when `shell.network` is "on". Besides
that, the folder the server is installed in is readable (a virtual
environment in a hidden part of $HOME, where `pip install` put basedpyright).

`shell.sandbox = "off"` or a `shell.sandboxExceptions` prefix matching the
server's command runs it unsandboxed; "require" with no working sandbox does
not start it. Each server's placement is reported in `agent/language/status`
and `agent-lsp config show`.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from agent_lsp.language.specs import ServerSpec
from agent_lsp.sandbox import Placement, SandboxPolicy

log = logging.getLogger(__name__)

# Cache folders in $HOME a server keeps across runs: writable in its sandbox (made
# when missing). Elsewhere in $HOME it writes to a scratch home that goes with it.
CACHE_DIRS: dict[str, tuple[str, ...]] = {
    "typescript-language-server": (".cache/typescript",),
    "gopls": (".cache/gopls", ".cache/go-build"),
    "clangd": (".cache/clangd",),
    "rust-analyzer": (".cache/rust-analyzer",),
}


@dataclass(frozen=True)
class ServerPlacement:
    placement: Placement
    argv: list[str]  # the command line that starts the server where the placement says

    def describe(self) -> str:
        """For the status and `config show`: "sandboxed, no network" or "not sandboxed: why"."""
        if self.placement.refused:
            return f"not started: {self.placement.refused.removeprefix('Not run: ')}"
        return self.placement.label()


def place_server(policy: SandboxPolicy | None, spec: ServerSpec, executable: str, root: Path,
                 starting: bool = False) -> ServerPlacement:
    """Where the server for `root` runs, and its command line; `starting`: it is about
    to start (its cache folders are made). Asks once per process whether the
    sandbox works (a short subprocess): call it off the event loop."""
    argv = [executable, *spec.args]
    if policy is None:
        return ServerPlacement(Placement(False, True, why="no sandbox policy here"), argv)
    home = policy.home
    caches = tuple(home / d for d in CACHE_DIRS.get(spec.name, ())) if home is not None else ()
    policy = replace(policy, roots=tuple(dict.fromkeys((*policy.roots, root))), writable=(*policy.writable, *caches),
                     readable=(*policy.readable, *_install_dirs(executable, home)))
    placement = policy.place(shlex.join([spec.command, *spec.args]))  # as configured: what an exception names
    if not placement.sandboxed:
        return ServerPlacement(placement, argv)
    for cache in caches if starting else ():
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            log.info("cannot make %s for %s: %s", cache, spec.name, error)
    return ServerPlacement(placement, placement.wrap(argv, cwd=root))


def _install_dirs(executable: str, home: Path | None) -> tuple[Path, ...]:
    """The folders a server needs to read to run: its own install prefix (the
    virtual environment or tree its executable is in, through links) and the
    Python that runs agent_lsp (where `pip install` put the Python servers).
    Never the home folder as a whole, nor a folder above it."""
    found = []
    for exe in dict.fromkeys((executable, os.path.realpath(executable))):
        folder = Path(exe).parent
        found += [folder.parent if folder.name == "bin" else folder, folder]
    found += [Path(sys.prefix), Path(sys.base_prefix)]

    def too_wide(path: Path) -> bool:
        return path == Path("/") or (home is not None and (path == home or path in home.parents))

    wanted = [p for p in dict.fromkeys(found) if not too_wide(p)]
    return tuple(p for p in wanted if not any(q in p.parents for q in wanted))
