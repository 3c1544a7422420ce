"""The hosts a sandboxed command may reach through the proxy (`shell.allowedDomains`).

An entry is a host name (`pypi.org`: that host only), a wildcard
(`*.github.com`: every host under github.com, not github.com itself), or an IP
address written as the command will write it (`127.0.0.1`, `::1`). Names are
compared without case and without a trailing dot. Any port of an allowed
host may be reached.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Iterable, Sequence

_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


def normalize_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def valid_entry(entry: str) -> bool:
    """A host name, `*.` and a host name, or an IP address."""
    host = normalize_host(entry)
    if host.startswith("*."):
        host = host[2:]
    try:
        ipaddress.ip_address(host)
        return not entry.strip().startswith("*.")
    except ValueError:
        pass
    return bool(host) and len(host) <= 253 and all(_LABEL.match(label) for label in host.split("."))


def clean_domains(entries: Iterable[str]) -> tuple[str, ...]:
    """The entries normalized, the invalid ones dropped (settings validation reports them)."""
    seen: dict[str, None] = {}
    for entry in entries:
        if isinstance(entry, str) and valid_entry(entry):
            seen.setdefault(normalize_host(entry), None)
    return tuple(seen)


def host_allowed(host: str, allowed: Sequence[str]) -> bool:
    host = normalize_host(host)
    if not host:
        return False
    for entry in allowed:
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and len(host) > len(entry) - 1:
                return True
        elif host == entry:
            return True
    return False


def checked_entry(entry: str) -> str:
    """For settings validation: the entry, or ValueError saying what is wrong."""
    if not valid_entry(entry):
        raise ValueError(f"{entry!r} is not a host name, *.name, or an IP address (no scheme, port or path)")
    return entry
