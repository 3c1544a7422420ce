"""The sandbox policy: the `shell` settings in, where each command runs out.

    [shell]
    sandbox = "auto"        # "auto": sandboxed where a sandbox works, else asked as unsandboxed;
                            # "require": refuse to run a command unsandboxed; "off": never sandboxed
    network = "off"         # "on": sandboxed commands may use the network
    allowedDomains = []     # with network "off": hosts reachable through the sandbox's proxy
    allowUnixSockets = false  # true: no seccomp filter on new Unix sockets
    landlock = true         # where bubblewrap does not work: Landlock and seccomp (false: unsandboxed)
    writablePaths = []      # writable besides the workspace roots and the temp folder
    readablePaths = []      # visible (read-only) besides the system and the toolchains in $HOME
    sandboxExceptions = ["docker"]   # command prefixes run outside the sandbox, always asked about

One `Placement` per command says whether it runs sandboxed, with network or
not, and why; it also wraps the command line for the sandbox it runs in.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal, Sequence

from agent_lsp.sandbox.detect import SandboxAvailability, sandbox_availability
from agent_lsp.sandbox.domains import clean_domains
from agent_lsp.sandbox.paths import is_under

SandboxMode = Literal["auto", "require", "off"]


@dataclass(frozen=True)
class Placement:
    """Where one command runs."""

    sandboxed: bool
    network: bool  # may it reach the network (always true unsandboxed)
    kind: str | None = None  # "bubblewrap" | "landlock" | "seatbelt" when sandboxed
    why: str = ""  # unsandboxed: why; sandboxed with network: why
    refused: str | None = None  # set: the command must not run at all ("require" and no sandbox)
    exception: bool = False  # unsandboxed on purpose (an exception or asked for): always asked about
    policy: "SandboxPolicy | None" = field(default=None, repr=False, compare=False)
    executable: str | None = None
    domains: tuple[str, ...] = ()  # no network but these hosts, through the proxy (shell.allowedDomains)
    seccomp: bool = False  # the seccomp filter is loaded (bubblewrap)

    @property
    def quiet(self) -> bool:
        """Sandboxed with no network (or only the hosts the user allowed): what it can do is
        confined to the workspace (journaled), temp, and those hosts."""
        return self.sandboxed and not self.network

    def label(self) -> str:
        """For the permission question, the tool result and the tool card."""
        if self.sandboxed:
            where = "sandboxed (Landlock)" if self.kind == "landlock" else "sandboxed"
            if self.network:
                return f"{where}, with network ({self.why})"
            if self.domains:
                shown = ", ".join(self.domains[:5]) + (", …" if len(self.domains) > 5 else "")
                return f"{where}, network only to {shown}"
            return f"{where}, no network" + (f" ({self.why})" if self.why else "")
        return f"not sandboxed: {self.why}"

    def meta(self) -> dict:
        data: dict = {"sandboxed": self.sandboxed, "network": self.network}
        if self.kind:
            data["kind"] = self.kind
        if self.why:
            data["why"] = self.why
        if self.domains:
            data["allowedDomains"] = list(self.domains)
        return data

    def refused_hosts(self, since: float) -> list[str]:
        """The hosts the proxy refused since `since` (time.monotonic()) for this allow list."""
        if not self.domains:
            return []
        from agent_lsp.sandbox.proxy import proxy_endpoint

        return proxy_endpoint(self.domains).refused_since(since)

    def wrap(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """The command line that runs `argv` where this placement says."""
        if not self.sandboxed or self.policy is None or self.executable is None:
            return list(argv)
        policy = self.policy
        if self.kind == "seatbelt":
            from agent_lsp.sandbox.seatbelt import seatbelt_argv

            return seatbelt_argv(self.executable, argv, writable=policy.writable_paths(), readable=policy.readable,
                                 home=policy.home, network=self.network)
        from agent_lsp.sandbox.bwrap import bwrap_argv
        from agent_lsp.sandbox.seccomp import native_filter

        if self.kind == "landlock":
            from agent_lsp.sandbox.landlock import landlock_argv

            program = native_filter(policy.allow_unix_sockets, deny_inet=not self.network) if self.seccomp else None
            return landlock_argv(self.executable, argv, writable=policy.writable_paths(), readable=policy.readable,
                                 temp_dirs=policy.temp_dirs, home=policy.home, network=self.network, seccomp=program)

        proxy = None
        if self.domains and not self.network:
            from agent_lsp.sandbox.proxy import proxy_endpoint

            proxy = proxy_endpoint(self.domains).socket_path
        return bwrap_argv(self.executable, argv, cwd=cwd, writable=policy.writable_paths(), readable=policy.readable,
                          temp_dirs=policy.temp_dirs, home=policy.home, network=self.network,
                          seccomp=native_filter(policy.allow_unix_sockets) if self.seccomp else None,
                          proxy_socket=proxy)


@dataclass(frozen=True)
class SandboxPolicy:
    mode: SandboxMode = "auto"
    roots: tuple[Path, ...] = ()  # the workspace roots: writable
    writable: tuple[Path, ...] = ()  # extra writable paths
    readable: tuple[Path, ...] = ()  # extra read-only paths
    network: bool = False
    exceptions: tuple[str, ...] = ()  # command prefixes that run outside the sandbox
    allowed_domains: tuple[str, ...] = ()  # without network: the hosts the proxy lets through
    allow_unix_sockets: bool = False  # no seccomp filter on socket(AF_UNIX)
    landlock: bool = True  # where bubblewrap does not work: the Landlock fallback (landlock.py)
    mode_setting: str = "shell.sandbox"  # the setting `mode` comes from, for the messages (MCP: mcp.sandbox)
    temp_dirs: tuple[Path, ...] = field(default_factory=lambda: (Path(tempfile.gettempdir()),))
    home: Path | None = field(default_factory=lambda: Path(os.path.expanduser("~")))
    search_path: str | None = None  # the PATH bubblewrap is looked for on (None: the server's)
    availability: Callable[[str | None], SandboxAvailability] = field(default=sandbox_availability, repr=False,
                                                                        compare=False)

    @classmethod
    def from_settings(cls, shell, roots: Sequence[Path], env: dict | None = None) -> "SandboxPolicy":
        """From the `shell` settings (config.ShellSettings) and the workspace roots."""
        env = dict(os.environ if env is None else env)
        home = env.get("HOME") or os.path.expanduser("~")

        def paths(raw: Sequence[str]) -> tuple[Path, ...]:
            return tuple(Path(os.path.abspath(home + p[1:] if p == "~" or p.startswith("~/") else p)) for p in raw)

        return cls(mode=shell.sandbox, roots=tuple(Path(os.path.abspath(r)) for r in roots),
                   writable=paths(shell.writable_paths), readable=paths(shell.readable_paths),
                   network=shell.network == "on", exceptions=tuple(shell.sandbox_exceptions),
                   allowed_domains=clean_domains(getattr(shell, "allowed_domains", ())),
                   allow_unix_sockets=bool(getattr(shell, "allow_unix_sockets", False)),
                   landlock=bool(getattr(shell, "landlock", True)),
                   home=Path(home), search_path=env.get("PATH"))

    def writable_paths(self) -> tuple[Path, ...]:
        return (*self.roots, *self.writable)

    def may_write(self, path: Path) -> bool:
        return any(is_under(path, p) for p in (*self.writable_paths(), *self.temp_dirs))

    def exception_for(self, command: str) -> str | None:
        """The exception (a command prefix, whole words) the command starts with, if any."""
        words = command.split()
        for prefix in self.exceptions:
            wanted = prefix.split()
            if wanted and words[: len(wanted)] == wanted:
                return prefix
        return None

    def status(self) -> SandboxAvailability:
        found = self.availability(self.search_path)
        if found.kind == "landlock" and not self.landlock:
            return SandboxAvailability(None, why_not=found.why_not)
        if found.kind is None and self.landlock and found.landlock_why_not:
            return replace(found, why_not=f"{found.why_not}; no Landlock either: {found.landlock_why_not}")
        return found

    def describe(self) -> str:
        """One line for `config show` and the health checks: which sandbox is active, or why none."""
        if self.mode == "off":
            return 'off (shell.sandbox is "off"): commands run unsandboxed'
        found = self.status()
        net = "with network" if self.network else "no network"
        if not self.network and self.allowed_domains and found.kind == "bubblewrap":
            shown = ", ".join(self.allowed_domains[:5]) + (", …" if len(self.allowed_domains) > 5 else "")
            net = f"network only to {shown}, through the sandbox's proxy"
        if found.works:
            return f"{found.describe()}, {net}"
        if self.mode == "require":
            return f"none, so commands are refused (shell.sandbox is \"require\"): {found.why_not}"
        return f"none, commands run unsandboxed and are asked about: {found.why_not}"

    def place(self, command: str, *, outside: bool = False) -> Placement:
        """Where `command` runs; `outside`: the agent asked to run it outside the sandbox."""
        if self.mode == "off":
            return Placement(False, True, why='the setting shell.sandbox is "off"')
        exception = self.exception_for(command)
        if exception is not None:
            return Placement(False, True, exception=True,
                             why=f'"{exception}" is a sandbox exception (shell.sandboxExceptions)')
        if outside:
            return Placement(False, True, exception=True, why="the agent asked to run it outside the sandbox")
        found = self.status()
        if not found.works:
            if self.mode == "require":
                return Placement(False, True, why=found.why_not,
                                 refused=f'Not run: {self.mode_setting} is "require" and no sandbox works here: '
                                 f"{found.why_not}")
            return Placement(False, True, why=found.why_not)
        why = 'the setting shell.network is "on"' if self.network else ""
        domains = () if self.network else self.allowed_domains
        network = self.network
        if found.kind != "bubblewrap" and domains:  # the proxy needs the sandbox's own loopback
            why, domains = "shell.allowedDomains needs bubblewrap", ()
        if found.kind == "landlock" and not network and not found.seccomp:  # the filter is what keeps sockets out
            network, why, domains = True, "Landlock without the seccomp filter cannot keep the network out", ()
        return Placement(True, network, found.kind, why, policy=self, executable=found.executable,
                         domains=domains, seccomp=found.seccomp and found.kind in ("bubblewrap", "landlock"))
