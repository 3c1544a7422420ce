"""What a damaged session file still holds: its events up to the first line
that is not the next event (not JSON, not UTF-8, a NUL byte, no `type`, a seq
out of order), and where the damage is.

Read only: the file is never written here, so the damaged part stays as it
is for whoever looks at it. Every line is parsed (a damaged file is the rare
case; the usual load in `store.py` leaves stream chunk lines unread), so a
bad chunk line is found too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_lsp.store.event_log import EventLog
from agent_lsp.store.file_format import CorruptSessionError, event_of, parse_header
from agent_lsp.visible import visible_name


@dataclass
class DamagedRead:
    header: dict[str, Any]
    events: EventLog  # the events before the damage (in memory; no file behind them)
    damage: CorruptSessionError | None  # the first bad line; None when every line is an event


def read_until_damage(path: Path) -> DamagedRead:
    """The header and the events of `path` up to its first bad line. A file
    with no readable header has nothing to show: CorruptSessionError."""
    with open(path, "rb") as f:
        header = parse_header(path, f.readline())
        events = EventLog()
        for number, line in enumerate(f, start=2):
            if not line.endswith(b"\n"):  # a last line cut short by a crash: never acknowledged
                break
            try:
                events.append(event_of(json.loads(line), len(events)))
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
                return DamagedRead(header, events, CorruptSessionError(path, number, f"invalid event line: {_reason(e)}"))
    return DamagedRead(header, events, None)


def _reason(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(error, KeyError):
        return f"no {error.args[0]!r}"
    text = str(error)
    return text if len(text) <= 120 else text[:120] + "…"


def describe(error: CorruptSessionError) -> str:
    """The damage as a person reads it, naming the file (not its directory) and the line."""
    return f"session file {visible_name(error.path.name)} is damaged at line {error.line}: {error.reason}"
