"""A session file's format: the header line, the event lines, the id that
names the file, the copy kept of a torn last line, and `CorruptSessionError`,
which names the file and the line that is not what the format says."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

from agent_lsp.store.event import MESSAGE
from agent_lsp.store.seq_runs import compact_source_seqs
from agent_lsp.store.session import Event


HEADER_KIND = "agent_lsp.session"


def torn_copy_of(path: Path) -> Path:
    """Where the torn last lines cut off a session file are kept (not a `.jsonl`: never listed)."""
    return path.with_name(path.name + ".torn")


class CorruptSessionError(Exception):
    def __init__(self, path: Path, line: int, reason: str):
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


def parse_header(path: Path, head: bytes) -> dict[str, Any]:
    """A session file's first line as its header; CorruptSessionError (line 1) if it is none."""
    if not head.strip():
        raise CorruptSessionError(path, 1, "empty file (no header)" if not head else "no header")
    try:
        header = json.loads(head)
    except ValueError as e:
        raise CorruptSessionError(path, 1, f"invalid header: {e}") from None
    if not isinstance(header, dict) or header.get("kind") != HEADER_KIND:
        raise CorruptSessionError(path, 1, "not an agent_lsp session file")
    return header


def new_session_id() -> str:
    return f"s_{int(time.time() * 1000):x}_{secrets.token_hex(4)}"


def event_of(obj: Any, seq: int) -> Event:
    event = Event(int(obj["seq"]), int(obj["time"]), obj["type"], obj["data"])
    if not isinstance(event.type, str) or not isinstance(event.data, dict):
        raise TypeError("an event needs a string type and an object data")
    if event.seq != seq:
        raise ValueError(f"seq {event.seq} where {seq} was expected")
    if event.type == MESSAGE:
        compact_source_seqs(event.data)
    return event
