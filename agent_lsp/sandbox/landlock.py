"""The Linux sandbox where bubblewrap does not work: Landlock and the seccomp filter.

Where bubblewrap is missing, or user namespaces are off (Ubuntu 24.04 turns
them off for unprivileged programs), a command starts through a small
launcher (the server's own Python, `-I -S`) that confines itself with
Landlock (the `landlockpy` binding) and the seccomp filter, then becomes the
command. The same policy as bubblewrap's, as far as Landlock can say it:

- read: the whole system but `$HOME`, `/home`, `/root` and `/run`; the
  toolchain paths of the home and `shell.readablePaths`;
- write: the workspace roots, `shell.writablePaths` and the temp folder;
- never a secret path, also where the paths above contain one (Landlock only
  allows, so a folder that holds a secret is allowed entry by entry, the
  secret left out; such a folder itself, the home when it is the workspace,
  cannot be listed and takes no new entry);
- no network: the seccomp filter refuses IPv4 and IPv6 sockets (no loopback
  either), and Landlock refuses TCP where the kernel can (ABI 4);
- no Unix socket (the filter), no abstract Unix socket or signal to a
  process outside (Landlock's scopes, ABI 6), no ptrace of one (Landlock).

Weaker than bubblewrap, and said so: no process namespace (a command that
leaves its process group, a daemon, outlives a cancel), no loopback of its
own (a test that starts a local server fails), the system's `/tmp` shared,
and no network allow list (the proxy needs the sandbox's own loopback).
`shell.landlock = false` turns this fallback off: then such a machine runs
commands unsandboxed and asks about each.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Sequence

from agent_lsp.sandbox.paths import secret_paths, toolchain_paths

HIDDEN_ROOTS = ("/home", "/root", "/run")
AGENT_VARIABLES = ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
                   "DBUS_SYSTEM_BUS_ADDRESS", "DOCKER_HOST", "TMUX", "STY", "WAYLAND_DISPLAY", "DISPLAY")

# The spec is one argument of lines "key<TAB>value" (no json: the launcher starts faster without it):
# lib (where landlockpy is), read / devices / write (paths), network (1 or 0), seccomp (hex), unset (names).
LAUNCH = r"""
import os, sys
spec, argv = {"read": [], "devices": [], "write": [], "unset": [], "seccomp": [""], "network": ["0"]}, sys.argv[3:]
for line in sys.argv[1].split("\n"):
    key, _, value = line.partition("\t")
    spec.setdefault(key, []).append(value)
sys.path.insert(0, spec["lib"][0])
import ctypes, types
util = types.ModuleType("ctypes.util")  # landlockpy looks for libc with ctypes.util, which runs ldconfig:
util.find_library = lambda name: None   # None is this program, which has libc (and saves 100 ms a command)
sys.modules["ctypes.util"] = ctypes.util = util
sys.modules["landlockpy.testing"] = types.ModuleType("landlockpy.testing")  # its test helpers: 100 ms of imports
try:
    from landlockpy import AccessFS, AccessNet, Ruleset, Scope
    READ = AccessFS.EXECUTE | AccessFS.READ_FILE | AccessFS.READ_DIR
    DEVICE = READ | AccessFS.WRITE_FILE | AccessFS.TRUNCATE | AccessFS.IOCTL_DEV
    ALL = AccessFS.NONE
    for right in AccessFS:
        ALL |= right
    FILE = AccessFS.EXECUTE | AccessFS.WRITE_FILE | AccessFS.READ_FILE | AccessFS.TRUNCATE | AccessFS.IOCTL_DEV
    with Ruleset(handled_net=AccessNet.NONE if spec["network"][-1] == "1" else None,
                 scoped=Scope.ABSTRACT_UNIX_SOCKET | Scope.SIGNAL) as rules:
        for key, rights in (("read", READ), ("devices", DEVICE), ("write", ALL)):
            for path in spec[key]:
                try:
                    rules.allow_path(path, rights if os.path.isdir(path) else rights & FILE)
                except OSError:
                    pass
        rules.restrict()
    if spec["seccomp"][-1]:
        program = bytes.fromhex(spec["seccomp"][-1])
        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        code = ctypes.create_string_buffer(program, len(program))
        prog = Prog(len(program) // 8, ctypes.addressof(code))
        if ctypes.CDLL(None, use_errno=True).prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "the seccomp filter could not be loaded")
except Exception as error:
    os.write(2, ("sandbox: Landlock could not confine the command: %s\n" % error).encode())
    os._exit(126)
env = {k: v for k, v in os.environ.items() if k not in spec["unset"]}
try:
    os.execvpe(argv[0], argv, env)
except OSError as error:
    os.write(2, ("sandbox: %s: %s\n" % (argv[0], error.strerror)).encode())
    os._exit(127)
"""


def landlock_abi() -> tuple[int, str]:
    """The kernel's Landlock ABI version (0: none), and why not when none."""
    if not sys.platform.startswith("linux"):
        return 0, f"Landlock is Linux only ({sys.platform})"
    try:
        import landlockpy
    except ImportError:
        return 0, "the landlockpy package is not installed"
    try:
        return landlockpy.abi_version(), ""
    except OSError as error:
        return 0, f"the kernel has no Landlock ({error.strerror or error})"


def visible_parts(path: Path, hidden: Sequence[Path]) -> list[Path]:
    """`path`, or where it holds a hidden path, its entries that hold none (recursively)."""
    return [Path(p) for p in _visible(str(path), [str(h) for h in hidden])]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _visible(path: str, hidden: list[str]) -> list[str]:
    real = os.path.realpath(path)
    if any(_under(path, h) or _under(real, h) for h in hidden):
        return []
    if not any(_under(h, path) or _under(h, real) for h in hidden):
        return [path]
    try:
        with os.scandir(path) as entries:
            names = sorted(e.name for e in entries)
    except OSError:
        return []
    return [part for name in names for part in _visible(os.path.join(path, name), hidden)]


def landlock_argv(python: str, argv: Sequence[str], *, writable: Sequence[Path], readable: Sequence[Path] = (),
                  temp_dirs: Sequence[Path] = (), home: Path | None = None, network: bool = False,
                  seccomp: bytes | None = None) -> list[str]:
    secrets = [] if home is None else secret_paths(home)
    secrets += [Path(os.path.realpath(s)) for s in secrets if os.path.islink(s)]
    hidden = [Path(p) for p in HIDDEN_ROOTS]
    if home is not None and home != Path("/"):
        hidden.append(home)
    read = visible_parts(Path("/"), [*hidden, *secrets])
    if home is not None:
        read += [p for t in toolchain_paths(home) if os.path.lexists(t) for p in visible_parts(t, secrets)]
    read += [p for r in readable for p in visible_parts(r, secrets)]
    write = [p for w in (*writable, *temp_dirs) for p in visible_parts(w, secrets)]
    import landlockpy

    lines = [("lib", str(Path(landlockpy.__file__).parent.parent)), ("network", "1" if network else "0"),
             ("seccomp", (seccomp or b"").hex()), ("devices", "/dev"), *(("read", str(p)) for p in read),
             *(("write", str(p)) for p in write), *(("unset", name) for name in AGENT_VARIABLES)]
    # a path with a line break or a tab cannot be said here: left out, it is simply not allowed
    spec = "\n".join(f"{key}\t{value}" for key, value in lines if "\n" not in value and "\t" not in value)
    return [python, "-I", "-S", "-c", LAUNCH, spec, "--", *argv]
