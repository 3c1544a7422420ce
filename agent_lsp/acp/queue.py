"""The session's queue as the ACP client sees it: `_agent-lsp/queue` notifications.

ACP v1 has no message for prompts waiting behind the running one, so the
face sends an extension notification with the whole queue each time it
changes (a prompt queued, taken by a turn, removed, or a cancel clearing it):

    _agent-lsp/queue  {sessionId, queue: [{messageId, text, delivery}], paused}

`delivery` is `prompt` (a `session/prompt` or followup waiting for a turn)
or `steer` (a steering message waiting for the running turn's next step).
`_agent-lsp/queue/remove {sessionId, messageId}` takes one out (a removed
prompt's `session/prompt` is answered `cancelled`).
"""

from __future__ import annotations

from typing import Any

from agent_lsp.agent import Agent

QUEUE_NOTIFICATION = "agent-lsp/queue"  # `_agent-lsp/queue` on the wire
REMOVE_METHOD = "agent-lsp/queue/remove"
INBOX_EVENTS = frozenset({"agent/inbox/inserted", "agent/inbox/discarded", "agent/inbox/claimed",
                          "agent/inbox/changed"})


def _text(message: dict[str, Any]) -> str:
    return "".join(b.get("text") or "" for b in message.get("content") or () if b.get("type") == "text")


def queue_params(agent: Agent) -> dict[str, Any]:
    inbox = agent.inbox
    entries = [{"messageId": m["id"], "text": _text(m), "delivery": "prompt"} for m in inbox.next_turn]
    entries += [{"messageId": m["id"], "text": _text(m), "delivery": "steer"} for m in inbox.next_step]
    return {"sessionId": agent.session_id, "queue": entries, "paused": inbox.paused}
