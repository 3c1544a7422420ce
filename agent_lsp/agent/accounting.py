"""Consumed-work accounting (R2.13): a fold over a session log that
tells an owner (a parent agent running a subagent, a client waiting on a
prompt) whether the work it handed over was consumed or dropped unrun.

- A turn accounts for consumed input if it entered a step, or if it claimed
  input and then ended blocked / aborted / interrupted / error.
- A `completed` turn that claimed input but entered no step (every claimed
  message was rewritten away) does not account for input.
- A cancel splice (`outcome: canceled`, nothing inserted) after the last
  accounting turn means pending work was dropped unrun.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

CONSUMING_ENDS = frozenset({"blocked", "aborted", "interrupted", "error"})


@dataclass(frozen=True)
class WorkAccount:
    consumed_turns: tuple[int, ...]  # turns that account for consumed input, in log order
    last_consumed_turn: int | None
    last_consumed_seq: int | None  # seq of that turn's turn/end
    dropped_unrun: bool  # a cancel splice came after the last accounting turn

    @property
    def consumed(self) -> bool:
        return bool(self.consumed_turns)


def _is_claim(data: dict[str, Any]) -> bool:
    return bool(data.get("removedCount")) and not data.get("inserted") and not data.get("outcome")


def _is_cancel(data: dict[str, Any]) -> bool:
    return data.get("outcome") == "canceled" and not data.get("inserted")


def account_work(events: Iterable[Any], *, start: int = 0) -> WorkAccount:
    """Fold `events` (Event objects, from seq `start` on) into a WorkAccount.
    An owner passes the seq at which it handed work over as `start`."""
    consumed: list[int] = []
    last_seq: int | None = None
    dropped = False
    turn: int | None = None
    claimed = stepped = False
    for e in events:
        if e.seq < start:
            continue
        t = e.type
        if t == "turn/start":
            turn, claimed, stepped = int(e.data.get("turn", 0)), False, False
        elif t == "agent/inbox/spliced":
            if turn is not None and _is_claim(e.data):
                claimed = True
            elif _is_cancel(e.data):
                dropped = True
        elif t == "step/start" and turn is not None:
            stepped = True
        elif t == "turn/end" and turn is not None:
            kind = (e.data.get("reason") or {}).get("kind")
            if stepped or (claimed and kind in CONSUMING_ENDS):
                consumed.append(turn)
                last_seq = e.seq
                dropped = False  # only a cancel after the last accounting turn counts
            turn = None
    return WorkAccount(tuple(consumed), consumed[-1] if consumed else None, last_seq, dropped)
