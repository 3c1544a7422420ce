"""Consumed-work accounting (R2.13): a fold over a session log that
tells an owner (a parent agent running a subagent, a client waiting on a
prompt) whether the work it handed over was consumed or dropped unrun.

- A turn accounts for consumed input if it entered a step, or if it claimed
  input and then ended blocked / aborted / interrupted / error.
- A `completed` turn that claimed input but entered no step (every claimed
  message was rewritten away) does not account for input.
- A cancel splice (`outcome: canceled`, nothing inserted) after the last
  accounting turn means pending work was dropped unrun.

It also folds the log's token usage: the tokens of each turn and of the
whole session, with a cost estimate where the model's price is known
(`turn/end` records both, `usage` and `sessionUsage`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

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


# ------------------------------------------------------------------ token usage and cost

USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
# What used tokens: the model's replies and compaction's summaries, each with its usage.
_USING_EVENTS = frozenset({"assistant/message", "compaction/summary"})

CostEstimate = Callable[[str, Mapping[str, Any]], "float | None"]  # (model, usage) -> USD, None if unpriced


def empty_usage() -> dict[str, Any]:
    return {key: 0 for key in USAGE_KEYS}


def add_usage(total: dict[str, Any], usage: Mapping[str, Any], cost: float | None, model: str | None) -> None:
    """Add one reply's usage (and its estimated cost) to `total`, in place.
    A reply whose model has no known price adds tokens but no cost, and names
    the model in `unpricedModels`, so a total never looks cheaper than it is."""
    for key in USAGE_KEYS:
        total[key] = int(total.get(key) or 0) + int(usage.get(key) or 0)
    if cost is not None:
        total["costUsd"] = round(float(total.get("costUsd") or 0.0) + cost, 9)
    elif model and any(usage.get(key) for key in USAGE_KEYS):
        unpriced = total.setdefault("unpricedModels", [])
        if model not in unpriced:
            unpriced.append(model)


def merge_usage(total: dict[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """`total` + `other` (two totals), as a new dict."""
    out = {**total}
    for key in USAGE_KEYS:
        out[key] = int(total.get(key) or 0) + int(other.get(key) or 0)
    if total.get("costUsd") is not None or other.get("costUsd") is not None:
        out["costUsd"] = round(float(total.get("costUsd") or 0.0) + float(other.get("costUsd") or 0.0), 9)
    unpriced = list(total.get("unpricedModels") or [])
    unpriced += [m for m in other.get("unpricedModels") or () if m not in unpriced]
    if unpriced:
        out["unpricedModels"] = unpriced
    return out


def account_usage(events: Iterable[Any], cost: CostEstimate | None = None) -> dict[str, Any]:
    """The tokens (and estimated cost) of the replies and summaries among `events`."""
    total = empty_usage()
    for e in events:
        if e.type not in _USING_EVENTS:
            continue
        usage = e.data.get("usage")
        if not usage:
            continue
        model = (e.data.get("message") or {}).get("model") or e.data.get("model")
        add_usage(total, usage, cost(model, usage) if cost is not None and model else None, model)
    return total


def last_session_usage(events: list[Any]) -> dict[str, Any] | None:
    """The session total the last `turn/end` recorded, if any."""
    for e in reversed(events):
        if e.type == "turn/end" and e.data.get("sessionUsage"):
            return dict(e.data["sessionUsage"])
    return None
