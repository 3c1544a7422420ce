"""The first line on a connection to the agent host, and the host's answer.

The connector writes one JSON line before the protocol's own bytes:
`{"face": "lsp", "tag": <installation>, "cwd": ..., "env": {...}}`. The host
answers one line, `{"ok": true, "pid": N}` or `{"error": "..."}`, then the
protocol's bytes flow both ways unchanged. The environment travels so that
each window's settings, model keys and commands see the environment its
editor started it with (over a socket only this user can reach); it is never
logged.
"""

from __future__ import annotations

import json
import os
from typing import Any

FACES = ("lsp",)
MAX_HELLO_BYTES = 1 << 20


def hello(face: str, tag: str) -> bytes:
    return json.dumps({"face": face, "tag": tag, "cwd": os.getcwd(), "env": dict(os.environ)}).encode() + b"\n"


def read_hello(line: bytes, tag: str) -> tuple[dict[str, Any] | None, str | None]:
    """The hello's fields, or the reason it is refused."""
    try:
        data = json.loads(line)
    except ValueError:
        return None, "the first line is not the agent host's hello"
    if not isinstance(data, dict) or data.get("face") not in FACES:
        return None, f"unknown face {data.get('face') if isinstance(data, dict) else None!r}"
    if data.get("tag") != tag:
        return None, f"this host runs agent-lsp {tag}, the connection {data.get('tag')!r}"
    env = data.get("env")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return None, "the hello's env is not a map of strings"
    cwd = data.get("cwd")
    return {"face": data["face"], "env": env, "cwd": cwd if isinstance(cwd, str) else None}, None


def answer(pid: int | None = None, error: str | None = None) -> bytes:
    return json.dumps({"error": error} if error else {"ok": True, "pid": pid}).encode() + b"\n"
