"""Crash repair on cold load (R11.3 in docs/agent-loop.md).

A session whose process died mid-turn ends in an open turn. Repair closes it
by appending, in order: an error `tool/result` for every tool call of the
open step that has none, `step/end` if a step is open, and
`turn/end {interrupted}`. Seqs continue, timestamps reuse the last real
event's time, nothing is truncated.
"""

from __future__ import annotations

from typing import Any

from agent_lsp.store.session import Event

OUTCOME_UNKNOWN_TEXT = (
    "The process stopped while this tool call was running; its outcome is unknown. "
    "Verify the state (files, processes) before retrying side-effecting work."
)
NOT_STARTED_TEXT = "The process stopped before this tool call started; it never ran."


def repair_events(events: list[Event]) -> list[tuple[str, dict[str, Any]]]:
    """The (type, data) pairs to append so the log ends with no open turn."""
    open_turn: int | None = None
    turn_start_index = -1
    for i in range(len(events) - 1, -1, -1):
        t = events[i].type
        if t == "turn/end":
            return []
        if t == "turn/start":
            open_turn = int(events[i].data.get("turn", 0))
            turn_start_index = i
            break
    if open_turn is None:
        return []

    repairs: list[tuple[str, dict[str, Any]]] = []
    open_step: int | None = None
    step_start_index = -1
    for i in range(len(events) - 1, turn_start_index, -1):
        t = events[i].type
        if t == "step/end":
            break
        if t == "step/start":
            open_step = int(events[i].data.get("step", 0))
            step_start_index = i
            break

    if open_step is not None:
        wanted: list[dict[str, Any]] = []  # tool-call blocks of the step's assistant message
        recorded: dict[str, int] = {}  # callId -> tool/call seq
        answered: set[str] = set()
        for e in events[step_start_index + 1 :]:
            if e.type == "assistant/message":
                content = (e.data.get("message") or {}).get("content") or []
                wanted = [b for b in content if b.get("type") == "tool-call"]
            elif e.type == "tool/call":
                recorded[str(e.data.get("callId"))] = e.seq
            elif e.type == "tool/result" and not isinstance(e.data.get("surfaceOp"), dict):
                answered.add(str(e.data.get("callId")))
        for block in wanted:
            call_id = str(block.get("id"))
            if call_id in answered:
                continue
            name = str(block.get("name", ""))
            if call_id in recorded:
                error = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN", "message": OUTCOME_UNKNOWN_TEXT}
                sources = [recorded[call_id]]
            else:
                error = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED", "message": NOT_STARTED_TEXT}
                sources = []
            repairs.append(
                (
                    "tool/result",
                    {
                        "turn": open_turn,
                        "step": open_step,
                        "callId": call_id,
                        "name": name,
                        "message": {
                            "role": "tool",
                            "callId": call_id,
                            "name": name,
                            "content": [{"type": "text", "text": error["message"]}],
                            "isError": True,
                        },
                        "error": error,
                        "surfaceOp": "append",
                        "sourceEventSeqs": sources,
                    },
                )
            )
        repairs.append(("step/end", {"turn": open_turn, "step": open_step}))
    repairs.append(("turn/end", {"turn": open_turn, "reason": {"kind": "interrupted"}}))
    return repairs
