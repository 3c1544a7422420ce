"""The macOS sandbox: a Seatbelt profile for `sandbox-exec`, from the same policy.

NOT TESTED ON macOS: only the profile's text is checked (tests/sandbox).
The rules follow the Linux sandbox: everything readable except $HOME (whose
toolchain paths and the extra readable paths stay readable) and the secret
paths (never, last rule wins); writes only in the workspace roots, the extra
writable paths and the temp folders; no network unless allowed. Paths go in
as parameters (`-D NAME=path`), never pasted into the profile's text, so no
path needs quoting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from agent_lsp.sandbox.paths import secret_paths, toolchain_paths

MAC_TEMP_DIRS = ("/private/tmp", "/private/var/folders")


def seatbelt_profile(*, writable: int, readable: int, toolchains: int, secrets: int, network: bool) -> str:
    """The profile's text, with `(param "W0")`… for the paths the arguments carry."""
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec)",
        "(allow process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow ipc-posix-shm)",
        "(allow pseudo-tty)",
        "(allow file-ioctl (literal \"/dev/tty\"))",
        "(allow file-read*)",
        "(deny file-read* (subpath (param \"HOME\")))",
        "(allow file-read-metadata (literal (param \"HOME\")))",
    ]
    lines += [f"(allow file-read* (subpath (param \"T{i}\")))" for i in range(toolchains)]
    lines += [f"(allow file-read* (subpath (param \"R{i}\")))" for i in range(readable)]
    lines += [f"(allow file-read* file-write* (subpath (param \"W{i}\")))" for i in range(writable)]
    lines += [f"(allow file-write* (subpath \"{p}\"))" for p in MAC_TEMP_DIRS]
    lines.append("(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\"))")
    lines += [f"(deny file-read* file-write* (subpath (param \"S{i}\")))" for i in range(secrets)]
    if network:
        lines.append("(allow network*)")
    else:
        lines.append("(allow network* (remote unix-socket))")
    return "\n".join(lines) + "\n"


def seatbelt_argv(exe: str, argv: Sequence[str], *, writable: Sequence[Path], readable: Sequence[Path] = (),
                  home: Path | None = None, network: bool = False) -> list[str]:
    home = home or Path("/nonexistent-home")
    toolchains = toolchain_paths(home)
    secrets = secret_paths(home)
    params = [f"-DHOME={home}"]
    params += [f"-DT{i}={p}" for i, p in enumerate(toolchains)]
    params += [f"-DR{i}={p}" for i, p in enumerate(readable)]
    params += [f"-DW{i}={p}" for i, p in enumerate(writable)]
    params += [f"-DS{i}={p}" for i, p in enumerate(secrets)]
    profile = seatbelt_profile(writable=len(writable), readable=len(readable), toolchains=len(toolchains),
                               secrets=len(secrets), network=network)
    return [exe, "-p", profile, *params, "--", *argv]
