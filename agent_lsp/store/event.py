"""One durable session event: `{seq, time, type, data}`, a line of the session file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Event:
    seq: int
    time: int  # epoch ms
    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "time": self.time, "type": self.type, "data": self.data}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "Event":
        return cls(int(obj["seq"]), int(obj["time"]), str(obj["type"]), dict(obj.get("data") or {}))
