"""Where a user's agent host listens: a Unix socket in a directory only that
user can enter.

The directory is `$XDG_RUNTIME_DIR/agent-lsp` where the runtime directory is
set (Linux desktops: `/run/user/UID`, cleared at logout), else
`$TMPDIR/agent-lsp-UID` (or `/tmp`). It is made with mode 0700 and refused
when it belongs to another user or others may enter it, so no other user can
reach the socket (which is also made 0600). The socket's name carries the
version and the installation, so a host started from another checkout or an
older release is never used: each has its own. `AGENT_LSP_HOST_SOCKET` names
another socket path (tests, or a user who wants one host for several
installations).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Mapping

SOCKET_ENV = "AGENT_LSP_HOST_SOCKET"
ENABLE_ENV = "AGENT_LSP_HOST"  # "1", "true", "on", "yes": editors' `agent-lsp` connects to the host
IDLE_ENV = "AGENT_LSP_HOST_IDLE_S"  # seconds the host stays up with no connection
DEFAULT_IDLE_S = 600.0
MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes, by platform


class AddressError(Exception):
    """The host's directory is not safe to use (another user's, or open to others)."""


def host_enabled(env: Mapping[str, str]) -> bool:
    return env.get(ENABLE_ENV, "").strip().lower() in ("1", "true", "on", "yes")


def idle_seconds(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get(IDLE_ENV, ""))
    except ValueError:
        return DEFAULT_IDLE_S
    return value if value > 0 else DEFAULT_IDLE_S


def installation_tag() -> str:
    """This release and installation: the host and its connectors must be the same code."""
    from agent_lsp import __version__

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return f"{__version__}-{hashlib.sha256(package.encode()).hexdigest()[:10]}"


def runtime_dir(env: Mapping[str, str]) -> Path:
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        candidate = Path(runtime) / "agent-lsp"
        if len(str(candidate)) + 40 <= MAX_SOCKET_PATH:
            return candidate
    base = env.get("TMPDIR") or "/tmp"
    candidate = Path(base) / f"agent-lsp-{os.getuid()}"
    if len(str(candidate)) + 40 > MAX_SOCKET_PATH:
        candidate = Path("/tmp") / f"agent-lsp-{os.getuid()}"
    return candidate


def socket_path(env: Mapping[str, str]) -> Path:
    explicit = env.get(SOCKET_ENV)
    if explicit:
        return Path(explicit)
    return runtime_dir(env) / f"host-{installation_tag()}.sock"


def prepare_directory(directory: Path) -> None:
    """Make the socket's directory (0700), or raise AddressError when the one
    there is not this user's alone."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.lstat()
    except OSError as error:
        raise AddressError(f"cannot make the agent host's directory {directory}: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise AddressError(f"{directory} is not a directory")
    if info.st_uid != os.getuid():
        raise AddressError(f"{directory} belongs to another user; refusing to use it for the agent host")
    if info.st_mode & 0o077:
        raise AddressError(f"{directory} may be entered by other users (mode {stat.S_IMODE(info.st_mode):o}); "
                           "refusing to use it for the agent host (chmod 700 it)")


def lock_path(socket: Path) -> Path:
    return socket.with_name(socket.name + ".lock")


TOKEN_ENV = "AGENT_LSP_HOST_TOKEN"  # the token of network connections (`agent-lsp daemon --listen`)


def token_path(socket: Path) -> Path:
    return socket.with_name(socket.name.removesuffix(".sock") + ".token")


def log_path(socket: Path) -> Path:
    return socket.with_name(socket.name.removesuffix(".sock") + ".log")
