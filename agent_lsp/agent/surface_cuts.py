"""Where compaction may cut the surface (R10), and the pruning of tool results.

- `prune_results`: replace each long tool result by its head, a marker and
  its tail (a `compaction/prune` then a replacing `tool/result`, both durable).
- `select_range`: the oldest surface nodes to summarise, keeping about
  `retain` tokens at the tail, ending only at a balanced cut (no tool call
  separated from its result).
"""

from __future__ import annotations

from typing import Any, Callable

from agent_lsp.agent.context_budget import raw_message_tokens

PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"


def message_of(event: Any) -> dict[str, Any]:
    """A surface node's message; a node without one (a rewind) is an empty message."""
    return event.data.get("message") or {}


def prune_text(text: str, threshold: int, head: int, tail: int) -> str:
    if len(text) <= threshold:  # len counts code points
        return text
    return text[:head] + PRUNE_MARKER + (text[-tail:] if tail > 0 else "")


def prune_results(session: Any, threshold: int, head: int, tail: int, *, upto: int | None = None,
                  before_first: Callable[[], Any] = lambda: None) -> int:
    """Prune the tool results on the surface (before position `upto`, when
    given) with a text longer than `threshold` characters; `before_first`
    runs before the first change. Idempotent. Returns how many were pruned."""
    events = session.events
    pruned = 0
    for seq in list(session.surface)[:upto]:
        e = events[seq]
        if e.type != "tool/result":
            continue
        content = e.data["message"].get("content") or []
        if not any(b.get("type") == "text" and len(b.get("text") or "") > threshold for b in content):
            continue
        if not pruned:
            before_first()
        new_content = [
            {**b, "text": prune_text(b["text"], threshold, head, tail)} if b.get("type") == "text" else b
            for b in content
        ]
        before = raw_message_tokens(e.data["message"])
        message = {**e.data["message"], "content": new_content}
        session.append("compaction/prune", {"seq": seq, "tokensBefore": before, "tokensAfter": raw_message_tokens(message)})
        data = {k: v for k, v in e.data.items() if k not in ("message", "surfaceOp", "sourceEventSeqs")}
        data["message"] = message
        data["surfaceOp"] = {"kind": "replace", "start": seq, "end": seq}
        data["sourceEventSeqs"] = [seq]
        session.append("tool/result", data)
        pruned += 1
    return pruned


def last_reply_at(session: Any) -> int:
    """Surface position of the latest assistant message (the results after it are new to the model), or -1."""
    events = session.events
    surface = session.surface
    for pos in range(len(surface) - 1, -1, -1):
        if events[surface[pos]].type == "assistant/message":
            return pos
    return -1


def balanced_cut(session: Any, pos: int) -> bool:
    """No tool call before surface position `pos` is without its result."""
    events = session.events
    open_calls: set[str] = set()
    for seq in session.surface[:pos]:
        m = message_of(events[seq])
        role = m.get("role")
        if role == "assistant":
            for b in m.get("content") or ():
                if b.get("type") == "tool-call":
                    open_calls.add(str(b.get("id")))
        elif role == "tool":
            open_calls.discard(str(m.get("callId")))
    return not open_calls


def select_range(session: Any, retain: int) -> list[int] | None:
    """Surface seqs to compact, keeping about `retain` tokens at the tail
    and cutting only where no tool call is separated from its result."""
    events = session.events
    surface = session.surface
    if len(surface) < 2:
        return None  # one message (a prompt too big by itself): a summary of it is not the prompt
    keep_from = len(surface)
    total = 0
    while keep_from > 0 and total < retain:
        keep_from -= 1
        total += raw_message_tokens(message_of(events[surface[keep_from]]))
    while keep_from > 0 and not balanced_cut(session, keep_from):
        keep_from -= 1
    if keep_from <= 0:
        return None
    rng = surface[:keep_from]
    if len(rng) == 1 and message_of(events[rng[0]]).get("source") == "compaction":
        return None  # only a checkpoint: nothing to gain
    return rng
