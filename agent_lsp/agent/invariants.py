"""Log invariants (R11.6), as a checker for tests and debugging.

`log_violations(events)` returns a list of readable violations (empty when
the log is sound): contiguous seqs, balanced and consecutive turns and
steps, chunks/messages/calls inside the open step, one `tool/result` per
`tool/call` in the same step, results in call order.
"""

from __future__ import annotations

from typing import Any, Iterable


def log_violations(events: Iterable[Any]) -> list[str]:
    problems: list[str] = []
    open_turn: int | None = None
    open_step: int | None = None
    last_turn = 0
    last_step = 0
    pending: list[str] = []  # tool calls of the open step awaiting results, in order
    for i, e in enumerate(events):
        t, d = e.type, e.data
        if e.seq != i:
            problems.append(f"seq {e.seq} at index {i}")
        if t == "turn/start":
            if open_turn is not None:
                problems.append(f"{e.seq}: turn/start while turn {open_turn} is open")
            if d.get("turn") != last_turn + 1:
                problems.append(f"{e.seq}: turn {d.get('turn')} after {last_turn}")
            open_turn, last_turn, last_step = d.get("turn"), d.get("turn", last_turn), 0
        elif t == "turn/end":
            if open_turn != d.get("turn"):
                problems.append(f"{e.seq}: turn/end {d.get('turn')} but open turn is {open_turn}")
            if open_step is not None:
                problems.append(f"{e.seq}: turn/end with step {open_step} open")
            open_turn = None
        elif t == "step/start":
            if open_turn != d.get("turn") or open_step is not None:
                problems.append(f"{e.seq}: step/start outside an open turn or inside a step")
            if d.get("step") != last_step + 1:
                problems.append(f"{e.seq}: step {d.get('step')} after {last_step}")
            open_step, last_step, pending = d.get("step"), d.get("step", last_step), []
        elif t == "step/end":
            if open_step != d.get("step"):
                problems.append(f"{e.seq}: step/end {d.get('step')} but open step is {open_step}")
            if pending:
                problems.append(f"{e.seq}: step ended with unanswered calls {pending}")
            open_step = None
        elif t in ("assistant/chunk", "assistant/message", "tool/call"):
            if (d.get("turn"), d.get("step")) != (open_turn, open_step):
                problems.append(f"{e.seq}: {t} names {d.get('turn')}/{d.get('step')}, open is {open_turn}/{open_step}")
            if t == "tool/call":
                pending.append(d.get("callId"))
        elif t == "tool/result" and d.get("surfaceOp") == "append":
            code = (d.get("error") or {}).get("code")
            if code in ("TOOL_NOT_STARTED",):
                continue  # crash repair: no tool/call was recorded
            if not pending:
                problems.append(f"{e.seq}: tool/result {d.get('callId')} with no pending tool/call")
            elif pending[0] != d.get("callId"):
                problems.append(f"{e.seq}: tool/result {d.get('callId')} out of order (expected {pending[0]})")
                if d.get("callId") in pending:
                    pending.remove(d.get("callId"))
            else:
                pending.pop(0)
        elif t in ("request/header", "request/context") and open_turn is None:
            problems.append(f"{e.seq}: {t} outside a turn")
    return problems
