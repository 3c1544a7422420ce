"""A failure the sandbox caused, told in words where the output shows it.

A write outside what the sandbox lets a command write fails with "Read-only
file system" (EROFS) or "Permission denied" (EACCES); a path of $HOME the
sandbox hides is "No such file or directory" although it exists; a name
lookup or a connection fails without network. The output says which path;
we name it when it lies where the sandbox, not the file system, refused.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agent_lsp.sandbox.paths import is_under, toolchain_paths

_PATH = re.compile(r"""(?:^|[\s'"‘`(=])(/[^\s'"’`:,)]*)""")
_WRITE = ("Read-only file system", "Permission denied", "Operation not permitted")
_MISSING = ("No such file or directory",)
_NETWORK = ("Network is unreachable", "Temporary failure in name resolution", "Could not resolve host",
            "Name or service not known", "No address associated with hostname", "getaddrinfo failed",
            "Failed to establish a new connection", "nodename nor servname")


def blocked_by_sandbox(output: str, policy, network: bool) -> str | None:
    """What the sandbox blocked, e.g. "write to /etc/hosts", or None when nothing says so."""
    for line in output.splitlines()[-400:]:
        path = _path_before(line, _MISSING + _WRITE)  # bubblewrap: missing; Landlock: permission denied
        if path is not None and policy.home is not None and _hidden(path, policy) and os.path.lexists(path):
            return f"{path} is hidden (the sandbox shows no part of $HOME but the toolchains and shell.readablePaths)"
        path = _path_before(line, _WRITE)
        if path is not None and not policy.may_write(path):
            return f"write to {path} (only the workspace, the temp folder and shell.writablePaths are writable)"
        if not network and any(sign in line for sign in _NETWORK):
            if getattr(policy, "allowed_domains", ()):
                return ('network access (shell.network is "off"; only shell.allowedDomains are reachable, '
                        "through the proxy in HTTP_PROXY/HTTPS_PROXY)")
            return 'network access (shell.network is "off")'
    return None


def _path_before(line: str, signs: tuple[str, ...]) -> Path | None:
    """The path the error is about: the last one before the error's words
    ("bash: line 1: /etc/hosts: Read-only file system")."""
    at = min((line.find(sign) for sign in signs if sign in line), default=-1)
    if at < 0:
        return None
    found = [m for m in _PATH.findall(line[:at]) if len(m) > 1]
    return Path(os.path.normpath(found[-1])) if found else None


def _hidden(path: Path, policy) -> bool:
    homes = [policy.home, Path("/home"), Path("/root")]
    if not any(is_under(path, home) for home in homes if home is not None):
        return False
    visible = [*toolchain_paths(policy.home), *policy.readable, *policy.writable_paths(), *policy.temp_dirs]
    return not any(is_under(path, v) for v in visible)
