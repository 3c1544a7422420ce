"""Which sandbox works on this machine, or why none does; asked once per process.

Linux: bubblewrap, found on PATH, tried once with the very options every
command gets (user and network namespaces included), so "it works here"
means a command would start. macOS: `sandbox-exec` (not tested on macOS).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

INSTALL_HINT = "apt install bubblewrap (Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)"
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SandboxAvailability:
    kind: str | None  # "bubblewrap" | "seatbelt" | None
    executable: str | None = None
    why_not: str = ""  # when kind is None: why no sandbox works, with how to fix it
    seccomp: bool = False  # bubblewrap: the seccomp filter loads here
    seccomp_why_not: str = ""
    landlock_abi: int = 0  # kind "landlock": the kernel's Landlock ABI
    landlock_why_not: str = ""  # kind None: why the Landlock fallback does not work either

    @property
    def works(self) -> bool:
        return self.kind is not None

    def describe(self) -> str:
        if self.kind == "bubblewrap":
            filtered = "seccomp filter on" if self.seccomp else f"no seccomp filter: {self.seccomp_why_not}"
            return f"bubblewrap ({self.executable}), {filtered}"
        if self.kind == "landlock":
            filtered = "the seccomp filter" if self.seccomp else f"no seccomp filter ({self.seccomp_why_not})"
            return (f"Landlock (ABI {self.landlock_abi}) and {filtered}, weaker than bubblewrap (no process or "
                    f"loopback of its own, no allow list), which does not work here: {self.why_not}")
        if self.kind == "seatbelt":
            return f"Seatbelt ({self.executable}; not tested on macOS)"
        return f"none: {self.why_not}"


def sandbox_availability(path: str | None = None) -> SandboxAvailability:
    """What sandbox works here; `path`: the PATH to look for bubblewrap on (default: ours)."""
    if sys.platform == "darwin":
        exe = shutil.which("sandbox-exec", path=path) or ("/usr/bin/sandbox-exec" if os.path.exists("/usr/bin/sandbox-exec") else None)
        if exe is None:
            return SandboxAvailability(None, why_not="sandbox-exec is missing")
        return SandboxAvailability("seatbelt", exe)
    if not sys.platform.startswith("linux"):
        return SandboxAvailability(None, why_not=f"no sandbox is supported on {sys.platform}")
    exe = shutil.which("bwrap", path=path)
    if exe is None:
        return _landlock_fallback(f"bubblewrap is not installed: {INSTALL_HINT}")
    found = _probe_bwrap(exe)
    return found if found.works else _landlock_fallback(found.why_not)


@functools.lru_cache(maxsize=8)
def _landlock_fallback(why_bwrap_not: str) -> SandboxAvailability:
    """Landlock and the seccomp filter, tried once (landlock.py); else no sandbox, and why."""
    from agent_lsp.sandbox.landlock import landlock_abi, landlock_argv
    from agent_lsp.sandbox.seccomp import native_filter

    abi, why = landlock_abi()
    if not abi:
        return SandboxAvailability(None, why_not=why_bwrap_not, landlock_why_not=why)
    program = native_filter(deny_inet=True)
    argv = landlock_argv(sys.executable, ["/bin/sh", "-c", "exit 0"], writable=(), home=None, seccomp=program)
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxAvailability(None, why_not=why_bwrap_not, landlock_why_not=str(error))
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return SandboxAvailability(None, why_not=why_bwrap_not,
                                   landlock_why_not=said[-1] if said else f"exit code {done.returncode}")
    return SandboxAvailability("landlock", sys.executable, why_not=why_bwrap_not, seccomp=program is not None,
                               seccomp_why_not="" if program else "none written for this processor",
                               landlock_abi=abi)


@functools.lru_cache(maxsize=8)
def _probe_bwrap(exe: str) -> SandboxAvailability:
    from agent_lsp.sandbox.bwrap import probe_argv

    try:
        done = subprocess.run(probe_argv(exe), stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxAvailability(None, why_not=f"bubblewrap ({exe}) could not be started: {error}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = said[-1] if said else f"exit code {done.returncode}"
        return SandboxAvailability(None, why_not=(
            f"bubblewrap ({exe}) cannot make a sandbox here ({detail}); user namespaces may be off: "
            "sysctl kernel.unprivileged_userns_clone=1 (Debian) or kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu)"))
    why = _probe_seccomp(exe)
    return SandboxAvailability("bubblewrap", exe, seccomp=not why, seccomp_why_not=why)


def _probe_seccomp(exe: str) -> str:
    """Why the seccomp filter does not load here ("" when it does)."""
    import platform

    from agent_lsp.sandbox.bwrap import probe_argv
    from agent_lsp.sandbox.seccomp import native_filter

    program = native_filter()
    if program is None:
        return f"none written for this processor ({platform.machine()})"
    try:
        done = subprocess.run(probe_argv(exe, program), stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not load it: {error}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap could not load it ({said[-1] if said else f'exit code {done.returncode}'})"
    return ""
