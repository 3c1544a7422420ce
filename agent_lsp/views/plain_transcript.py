"""The session as readable lines, for editors that do not render `session/event`.

A client that did not declare `experimental.agentLsp.events` (eglot, any
editor without our plugin) gets none of the custom notifications; it gets
the conversation as `window/logMessage` lines instead, which every LSP
client shows in its log or events buffer: what the user asked, each tool
call and its outcome, the answer, and how the turn ended.
"""

from __future__ import annotations

from typing import Any

from agent_lsp.agent.loop import RUNTIME_CONTEXT_SOURCE
from agent_lsp.llm.types import message_text
from agent_lsp.views.lines import call_arguments, failure_text, first_line


def transcript_line(kind: str, data: dict[str, Any]) -> str | None:
    """The line for one durable event; None for the events a reader does not need
    (chunks, steps, request headers: the answer comes whole with assistant/message)."""
    if kind == "user/message":
        if (data.get("message") or {}).get("source") == RUNTIME_CONTEXT_SOURCE:
            return None  # the editor state the server told the model, not the user's words
        text = message_text(data.get("message") or {}).strip()
        return f"You: {text}" if text else None
    if kind == "assistant/message":
        text = message_text(data.get("message") or {}).strip()
        return f"Agent: {text}" if text else None
    if kind == "tool/call":
        return f"→ {data.get('name', 'tool')} {call_arguments(data.get('arguments'))}".rstrip()
    if kind == "tool/result":
        return _result_line(data)
    if kind == "turn/end":
        reason = data.get("reason") or {}
        why = reason.get("kind", "ended")
        if why == "error":
            error = reason.get("error") or {}
            why = f"error: {failure_text(error)}".rstrip()
        return f"— turn {data.get('turn')} {why}"
    return None


def _result_line(data: dict[str, Any]) -> str:
    name = data.get("name", "tool")
    meta = data.get("meta") or {}
    error = data.get("error") or {}
    exit_code = meta.get("exitCode")
    failed = bool((data.get("message") or {}).get("isError")) or bool(error) or (isinstance(exit_code, int) and exit_code != 0)
    detail = error.get("message") or (f"exit {exit_code}" if exit_code is not None else "")
    first = first_line(detail)
    return f"  {'✗' if failed else '✓'} {name}{' · ' + first if first else ''}"
