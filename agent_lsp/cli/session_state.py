"""What the headless client has seen of a session (status, claimed and
dropped messages, turn ends) and the result of one followup."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SessionState:
    """What the client has seen of one session."""

    status: str | None = None
    last_seq: int = -1
    claimed: dict[str, int] = field(default_factory=dict)  # message id -> the turn that took it
    discarded: set[str] = field(default_factory=set)  # message ids dropped from the inbox
    turn_end_reasons: dict[int, Any] = field(default_factory=dict)  # turn -> its `turn/end` reason
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def finished(self, message_id: str) -> bool:
        """The agent is idle and the turn that took this message has ended
        (or the message was dropped without a turn)."""
        if self.status != "idle":
            return False
        if message_id in self.discarded:
            return True
        turn = self.claimed.get(message_id)
        return turn is not None and turn in self.turn_end_reasons


@dataclass
class TurnResult:
    session_id: str
    message_id: str
    reason: Any  # the last `turn/end` reason ({kind, ...}); None if none was seen
    text: str  # assistant text streamed while waiting

    @property
    def ok(self) -> bool:
        kind = self.reason.get("kind") if isinstance(self.reason, dict) else self.reason
        return kind == "completed"
