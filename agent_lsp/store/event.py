"""One durable session event: `{seq, time, type, data}`, a line of the session file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_lsp.store.seq_runs import plain_data

MESSAGE = "assistant/message"  # its `sourceEventSeqs` may be held as runs (store/seq_runs.py)
TITLE_EVENT = "session/title"  # the session's title since (the model's or the user's); the last one counts


@dataclass(slots=True)
class Event:
    seq: int
    time: int  # epoch ms
    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        data = plain_data(self.data) if self.type == MESSAGE else self.data
        return {"seq": self.seq, "time": self.time, "type": self.type, "data": data}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "Event":
        return cls(int(obj["seq"]), int(obj["time"]), str(obj["type"]), dict(obj.get("data") or {}))
