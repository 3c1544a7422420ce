"""The first line on a connection to the agent host, and the host's answer.

The connector writes one JSON line before the protocol's own bytes:
`{"face": "lsp", "tag": <installation>, "cwd": ..., "env": {...}}`, and over
the network (`agent-lsp daemon --listen`) `"token"`: without the host's
token a network connection is refused, loopback included (other users of a
machine can reach a loopback port). The host
answers one line, `{"ok": true, "pid": N}` or `{"error": "..."}`, then the
protocol's bytes flow both ways unchanged. The environment travels so that
each window's settings, model keys and commands see the environment its
editor started it with (over a socket only this user can reach); it is never
logged.
"""

from __future__ import annotations

import hmac
import json
import os
from typing import Any

FACES = ("lsp", "acp")
MAX_HELLO_BYTES = 1 << 20


def hello(face: str, tag: str, token: str | None = None, settings: dict[str, Any] | None = None) -> bytes:
    fields: dict[str, Any] = {"face": face, "tag": tag, "cwd": os.getcwd(), "env": dict(os.environ)}
    if token is not None:
        fields["token"] = token
    if settings is not None:  # `agent-lsp acp --settings`: the ACP face has no initializationOptions
        fields["settings"] = settings
    return json.dumps(fields).encode() + b"\n"


def version_of(tag: str) -> str:
    return tag.rpartition("-")[0] if "-" in tag else tag


def read_hello(line: bytes, tag: str, token: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """The hello's fields, or the reason it is refused. With `token` (a network
    connection) the hello must carry it, and only the release must match (the
    connector runs from another installation, on another machine)."""
    try:
        data = json.loads(line)
    except ValueError:
        return None, "the first line is not the agent host's hello"
    if not isinstance(data, dict) or data.get("face") not in FACES:
        return None, f"unknown face {data.get('face') if isinstance(data, dict) else None!r}"
    if token is not None:
        given = data.get("token")
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), token.encode()):
            return None, "a network connection needs the host's token (AGENT_LSP_HOST_TOKEN); it was missing or wrong"
        if not isinstance(data.get("tag"), str) or version_of(data["tag"]) != version_of(tag):
            return None, f"this host runs agent-lsp {version_of(tag)}, the connection {data.get('tag')!r}"
    elif data.get("tag") != tag:
        return None, f"this host runs agent-lsp {tag}, the connection {data.get('tag')!r}"
    env = data.get("env")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return None, "the hello's env is not a map of strings"
    cwd = data.get("cwd")
    settings = data.get("settings")
    return {"face": data["face"], "env": env, "cwd": cwd if isinstance(cwd, str) else None,
            "settings": settings if isinstance(settings, dict) else None}, None


def receive_hello(sock: Any) -> tuple[bytes, bytes]:
    """The hello line from a blocking socket, and the bytes that came after it
    (the protocol's first, which the face must read first)."""
    data = b""
    while b"\n" not in data and len(data) <= MAX_HELLO_BYTES:
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    line, _, rest = data.partition(b"\n")
    return line, rest


def answer(pid: int | None = None, error: str | None = None) -> bytes:
    return json.dumps({"error": error} if error else {"ok": True, "pid": pid}).encode() + b"\n"
