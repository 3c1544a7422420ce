"""bubblewrap's command line for one sandboxed command (Linux).

Mounts, in order (a later one covers an earlier one):

1. the whole file system read-only, a fresh /dev and /proc, /run empty but for
   the resolver's files (no daemon's socket: docker, D-Bus, the user's
   runtime folder with its ssh and gpg agents);
2. the temp folder writable;
3. $HOME (and /home, /root) hidden under an empty scratch folder;
4. the toolchain paths of $HOME and the extra readable paths, read-only;
5. the workspace roots and the extra writable paths, writable;
6. every secret path covered (an empty read-only folder, or /dev/null), and the
   sockets other programs keep in the temp folder (X11, tmux, ssh agents,
   D-Bus, PostgreSQL, MySQL); `SSH_AUTH_SOCK` and the like are unset.

A seccomp filter (`seccomp.py`) refuses new Unix sockets and io_uring where
the kernel takes one: a Unix socket the sandbox shows (read-only does not stop
a connect) is out of reach. bubblewrap loads it from a file descriptor; to keep
the command line self-contained (any caller only runs it), the line starts
with `/bin/sh -c 'exec "$@" 9<"$0"'`, which opens the filter and becomes
bubblewrap.

With a network allow list (`proxy_socket`), the host's proxy socket is mounted
in and the sandbox's first process is the bridge (`bridge.py`), which serves
it on the sandbox's loopback and loads the filter into the command.

Namespaces: a user namespace with every capability dropped (also when the
server runs as root), its own pids (when the sandbox's first process dies,
the kernel kills every process in it), IPC, hostname, and network unless
network is allowed (then only a loopback of its own). `--die-with-parent`
ends the sandbox with the process that started it; `--new-session` keeps a
command from pushing keystrokes into a terminal (TIOCSTI). bubblewrap also
sets no_new_privs: nothing inside gains privileges through setuid files.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Sequence

from agent_lsp.sandbox.bridge import PROXY_SOCKET_IN_SANDBOX, PROXY_SOCKET_WITHOUT_RUN, bridge_argv, bridge_python
from agent_lsp.sandbox.paths import is_under, secret_paths, toolchain_paths
from agent_lsp.sandbox.seccomp import filter_path

# Sockets of other programs in a temp folder, hidden from the command.
TEMP_SOCKETS = (".X11-unix", ".ICE-unix", ".XIM-unix", ".font-unix", "tmux-*", "ssh-*", "dbus-*", ".s.PGSQL.*",
                "mysql*.sock", "gpg-*", "keyring-*", "screen", "uscreens")
_TEMP_SOCKET_NAME = re.compile("|".join(fnmatch.translate(p) for p in TEMP_SOCKETS))
# Unset in the sandbox: they name a way out (agents, buses).
AGENT_VARIABLES = ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
                   "DBUS_SYSTEM_BUS_ADDRESS", "DOCKER_HOST", "TMUX", "STY", "WAYLAND_DISPLAY", "DISPLAY")
RESOLVER_PATHS = ("/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager/resolv.conf")

BASE_OPTIONS = ("--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL")


def bwrap_argv(exe: str, argv: Sequence[str], *, cwd: Path, writable: Sequence[Path], readable: Sequence[Path] = (),
               temp_dirs: Sequence[Path] = (), home: Path | None = None, network: bool = False,
               seccomp: bytes | None = None, proxy_socket: Path | None = None) -> list[str]:
    """`seccomp`: the filter to load (None: none); `proxy_socket`: the host's
    proxy for the allowed domains (network stays off but for it)."""
    out = [exe, *BASE_OPTIONS]
    if not network:
        out.append("--unshare-net")
    if proxy_socket is not None:
        out.append("--as-pid-1")  # the bridge is process 1: nothing else in the sandbox runs unfiltered
    out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    own_run = os.path.isdir("/run") and not os.path.islink("/run")
    if own_run:
        out += ["--tmpfs", "/run"]
        for path in RESOLVER_PATHS:
            out += ["--ro-bind-try", path, path]
        if os.path.islink("/run/shm"):
            out += ["--symlink", "/dev/shm", "/run/shm"]
    for temp in temp_dirs:
        out += ["--bind-try", str(temp), str(temp)]
    for hidden in _hidden_homes(home):
        out += ["--tmpfs", str(hidden)]
    if home is not None:
        for path in toolchain_paths(home):
            if os.path.lexists(path):
                out += ["--ro-bind-try", str(path), str(path)]
    for path in readable:
        out += ["--ro-bind-try", str(path), str(path)]
    for path in writable:
        out += ["--bind-try", str(path), str(path)]
    if home is not None:
        for secret in secret_paths(home):
            if not os.path.lexists(secret):
                continue
            out += _mask(secret)
            real = Path(os.path.realpath(secret))
            if real != secret:  # a secret folder that is a link: its target is covered too
                out += _mask(real)
    for temp in temp_dirs:
        for found in _temp_sockets(temp):
            out += _mask(found)
    agent = os.environ.get("SSH_AUTH_SOCK")
    if agent and os.path.isabs(agent) and os.path.lexists(agent):
        out += _mask(Path(agent).parent if Path(agent).parent != Path("/") else Path(agent))
    for name in AGENT_VARIABLES:
        out += ["--unsetenv", name]
    if proxy_socket is not None:
        python, installation = bridge_python()
        if home is not None and any(is_under(installation, h) for h in _hidden_homes(home)):
            out += ["--ro-bind-try", str(installation), str(installation)]
        if any(is_under(proxy_socket, p) for p in (*temp_dirs, *writable)):
            out += _mask(proxy_socket.parent)  # no command may replace the socket for the next one
        inside = PROXY_SOCKET_IN_SANDBOX if own_run else PROXY_SOCKET_WITHOUT_RUN
        out += ["--ro-bind", str(proxy_socket), inside]
        argv = bridge_argv(python, seccomp, argv, inside)
    elif seccomp is not None:
        out += ["--seccomp", "9"]
        out = ["/bin/sh", "-c", 'exec "$@" 9<"$0"', filter_path(seccomp), *out]
    out += ["--chdir", str(cwd), "--", *argv]
    return out


def _hidden_homes(home: Path | None) -> list[Path]:
    hidden = [Path(p) for p in ("/home", "/root") if os.path.isdir(p)]
    if (home is not None and home != Path("/") and home.is_absolute() and os.path.isdir(home)
            and not any(is_under(home, h) for h in hidden)):
        hidden.append(home)
    return hidden


def _temp_sockets(temp: Path) -> list[Path]:
    """What of TEMP_SOCKETS is in `temp` (one listing of it)."""
    try:
        with os.scandir(temp) as entries:
            names = sorted(e.name for e in entries)
    except OSError:
        return []
    return [Path(temp) / n for n in names if _TEMP_SOCKET_NAME.match(n)]


def _mask(path: Path) -> list[str]:
    """Options that cover `path` (when it exists) with nothing."""
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", str(path), "--remount-ro", str(path)]
    if os.path.islink(path) and os.path.isdir(path):
        return ["--tmpfs", str(path)]  # the link is not in the scratch home: an empty folder takes its place
    if os.path.lexists(path):
        return ["--ro-bind", "/dev/null", str(path)]
    return []


def probe_argv(exe: str, seccomp: bytes | None = None) -> list[str]:
    """A command that starts only where every command would (network namespace included)."""
    return bwrap_argv(exe, ["/bin/sh", "-c", "exit 0"], cwd=Path("/"), writable=(), home=None, network=False,
                      seccomp=seccomp)
