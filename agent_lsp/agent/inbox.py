"""The inbox (R2): two FIFO lists, `next-turn` and `next-step`.

The durable record is the `agent/inbox/spliced` event; the lists are its
projection. Every mutation writes the splice first and changes the lists
after, so a synchronous session observer sees the lists as they were.

The queue is editable: a queued message's text can be replaced (a splice
with `outcome: "edited"`), and a message moved within or between the lists
(`outcome: "moved"`). The `next-turn` list can be paused (the durable
`agent/inbox/paused` event): while paused, no turn starts from it (steers
still reach the running turn). Each edit also emits `agent/inbox/changed`
with both lists, for clients.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, Callable, Iterable

from agent_lsp.agent.context_text import context_text
from agent_lsp.store.session import Event, Session

NEXT_TURN = "next-turn"
NEXT_STEP = "next-step"
TARGETS = (NEXT_TURN, NEXT_STEP)
PAUSED_EVENT = "agent/inbox/paused"


def new_message_id() -> str:
    return f"msg_{secrets.token_hex(6)}"


def _context_block(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("type") == "text" and isinstance(item.get("text"), str):
        return {"type": "text", "text": item["text"]}
    return {"type": "text", "text": "<context>\n" + context_text(item) + "\n</context>"}


def make_message(
    content: str | list[dict[str, Any]],
    *,
    id: str | None = None,
    source: str = "user",
    context: list[dict[str, Any]] | None = None,
    delivery: str | None = None,
    note: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A user-role inbox message. Content must be lossless JSON (R2.3);
    context items are appended to the content as text blocks, and also kept
    verbatim under "context" for clients. `delivery` ("steer" or "inject")
    tells clients how the sender sent it; a followup carries none."""
    if isinstance(content, str):
        blocks = [{"type": "text", "text": content}]
    elif isinstance(content, list) and all(isinstance(b, dict) for b in content):
        blocks = [dict(b) for b in content]
    else:
        raise TypeError("content must be a string or a list of block dicts")
    message: dict[str, Any] = {"role": "user", "id": id or new_message_id(), "source": source, "content": blocks}
    if delivery:
        message["delivery"] = delivery
    if note:
        message["note"] = dict(note)  # what clients show: the content is for the model
    if context:
        message["context"] = [dict(c) for c in context]
        blocks.extend(_context_block(c) for c in context)
    try:
        # Round-trip: rejects non-JSON content (sets, objects, NaN) at send time.
        message = json.loads(json.dumps(message, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise ValueError(f"message content is not lossless JSON: {e}") from None
    return message


class Inbox:
    def __init__(self, session: Session, emit: Callable[[str, dict[str, Any]], None]):
        self._session = session
        self._emit = emit
        self._lists: dict[str, list[dict[str, Any]]] = {NEXT_TURN: [], NEXT_STEP: []}
        self.paused = False

    # ------------------------------------------------------------------ views

    @property
    def next_turn(self) -> list[dict[str, Any]]:
        return list(self._lists[NEXT_TURN])

    @property
    def next_step(self) -> list[dict[str, Any]]:
        return list(self._lists[NEXT_STEP])

    @property
    def pending(self) -> bool:
        """Whether there is work a turn would take (a paused next-turn list is none)."""
        return bool((self._lists[NEXT_TURN] and not self.paused) or self._lists[NEXT_STEP])

    def has_next_step(self) -> bool:
        return bool(self._lists[NEXT_STEP])

    def contains(self, message_id: str) -> bool:
        return any(m.get("id") == message_id for lst in self._lists.values() for m in lst)

    def find(self, message_id: str) -> tuple[str, int] | None:
        """(target, index) of a pending message."""
        for target in TARGETS:
            for i, m in enumerate(self._lists[target]):
                if m.get("id") == message_id:
                    return target, i
        return None

    # -------------------------------------------------------------- mutations

    def _splice(
        self, target: str, start: int, removed_count: int, inserted: list[dict[str, Any]], outcome: str | None = None
    ) -> list[dict[str, Any]]:
        if removed_count == 0 and not inserted:
            return []  # a no-op splice writes nothing (R2.4)
        data: dict[str, Any] = {"target": target, "start": start}
        if removed_count:
            data["removedCount"] = removed_count
        data["inserted"] = inserted
        if outcome:
            data["outcome"] = outcome
        self._session.append("agent/inbox/spliced", data)
        lst = self._lists[target]
        removed = lst[start : start + removed_count]
        lst[start : start + removed_count] = inserted
        return removed

    def append(self, target: str, message: dict[str, Any]) -> None:
        if self.contains(message["id"]):
            raise ValueError(f"message id {message['id']!r} is already pending")
        self._splice(target, len(self._lists[target]), 0, [message])
        self._emit("agent/inbox/inserted", {"target": target, "message": message})

    def remove(self, message_id: str) -> bool:
        for target in TARGETS:
            for i, m in enumerate(self._lists[target]):
                if m.get("id") == message_id:
                    removed = self._splice(target, i, 1, [], "canceled")
                    for r in removed:
                        self._emit("agent/inbox/discarded", {"target": target, "message": r})
                    return True
        return False

    def clear(self) -> None:
        for target in (NEXT_STEP, NEXT_TURN):
            n = len(self._lists[target])
            if n:
                for r in self._splice(target, 0, n, [], "canceled"):
                    self._emit("agent/inbox/discarded", {"target": target, "message": r})

    def claim(self, *, first_step: bool, turn: int) -> list[dict[str, Any]]:
        """Remove the batch for the next step (R2.6): all of next-step, plus
        one next-turn message at a turn's first step."""
        batch = self._splice(NEXT_STEP, 0, len(self._lists[NEXT_STEP]), [])
        if first_step and self._lists[NEXT_TURN] and not self.paused:
            batch = batch + self._splice(NEXT_TURN, 0, 1, [])
        for m in batch:
            self._emit("agent/inbox/claimed", {"message": m, "turn": turn})
        return batch

    # ------------------------------------------------------------------ edits

    def update(self, message_id: str, content: str | list[dict[str, Any]]) -> dict[str, Any] | None:
        """Replace a queued message's content (its id, source, delivery and
        context stay); the new message, or None when it is not pending."""
        where = self.find(message_id)
        if where is None:
            return None
        target, i = where
        old = self._lists[target][i]
        new = make_message(content, id=message_id, source=old.get("source", "user"),
                           context=old.get("context"), delivery=old.get("delivery"))
        self._splice(target, i, 1, [new], "edited")
        self._changed()
        return new

    def move(self, message_id: str, target: str, index: int | None = None) -> bool:
        """Move a pending message to position `index` (default: the end) of
        `target`; False when it is not pending."""
        if target not in TARGETS:
            raise ValueError(f"unknown inbox list {target!r}")
        where = self.find(message_id)
        if where is None:
            return False
        source, i = where
        message = self._lists[source][i]
        if source == target:
            lst = self._lists[target]
            to = len(lst) - 1 if index is None else max(0, min(index, len(lst) - 1))
            if to == i:
                return True
            lo, hi = min(i, to), max(i, to)
            span = [m for m in lst[lo : hi + 1] if m is not message]
            span.insert(to - lo, message)
            self._splice(target, lo, hi - lo + 1, span, "moved")
        else:
            self._splice(source, i, 1, [], "moved")
            lst = self._lists[target]
            to = len(lst) if index is None else max(0, min(index, len(lst)))
            self._splice(target, to, 0, [message], "moved")
        self._changed()
        return True

    def set_paused(self, paused: bool) -> bool:
        """Pause or resume the next-turn list; False when it already was so."""
        if paused == self.paused:
            return False
        self._session.append(PAUSED_EVENT, {"paused": paused})
        self.paused = paused
        self._changed()
        return True

    def _changed(self) -> None:
        self._emit("agent/inbox/changed", {"nextTurn": self.next_turn, "nextStep": self.next_step, "paused": self.paused})

    # ----------------------------------------------------------------- replay

    def rebuild(self, events: Iterable[Event]) -> None:
        """Re-apply every persisted splice (R2.12); an invalid one fails loudly."""
        lists: dict[str, list[dict[str, Any]]] = {NEXT_TURN: [], NEXT_STEP: []}
        paused = False
        for e in events:
            if e.type == PAUSED_EVENT:
                paused = bool(e.data.get("paused"))
                continue
            if e.type != "agent/inbox/spliced":
                continue
            d = e.data
            target, start, count = d.get("target"), d.get("start"), d.get("removedCount", 0)
            inserted = d.get("inserted", [])
            if target not in lists or not isinstance(start, int) or not isinstance(count, int):
                raise ValueError(f"invalid persisted splice at seq {e.seq}: {d!r}")
            lst = lists[target]
            if start < 0 or start + count > len(lst) or (start > len(lst)):
                raise ValueError(f"invalid persisted splice at seq {e.seq}: out of range")
            lst[start : start + count] = list(inserted)
        self._lists = lists
        self.paused = paused
