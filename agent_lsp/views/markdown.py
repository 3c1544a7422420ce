"""A session as a Markdown document: its title, what the user wrote, what the
agent answered, the tools it ran (failures with their reason), and turns that
did not end normally. Context the loop added for the model (runtime context,
tool outputs, reasoning) is left out: this is the conversation a person had.
"""

from __future__ import annotations

from typing import Any, Iterable

from agent_lsp.store.event import TITLE_EVENT
from agent_lsp.store.message_text import PERSON_SOURCES, assistant_text, image_placeholders, user_text
from agent_lsp.views.lines import call_arguments, cut, failure_text, first_line

TITLE_CHARS = 80


def session_title(events: Iterable[Any], meta: dict[str, Any]) -> str | None:
    """The session's title: its last `session/title`, the one it was created with,
    else the start of the first thing the user wrote (as the listing titles it)."""
    titled, first = None, None
    for event in events:
        if event.type == TITLE_EVENT and event.data.get("title"):
            titled = str(event.data["title"])
        elif first is None and event.type == "user/message":
            message = event.data.get("message") or {}
            if message.get("source") in PERSON_SOURCES:
                first = " ".join(user_text(message).split()) or None
    if titled or meta.get("title"):
        return titled or str(meta["title"])
    return cut(first, TITLE_CHARS) if first else None


def session_markdown(session_id: str, events: Iterable[Any], meta: dict[str, Any]) -> str:
    """The Markdown of a session's held events (Event: .type, .data)."""
    events = list(events)
    title = session_title(events, meta)
    parts = [f"# {title or 'Session ' + session_id}", f"Session `{session_id}`"]
    for event in events:
        part = _part(event.type, event.data)
        if part:
            parts.append(part)
    return "\n\n".join(parts) + "\n"


def _part(kind: str, data: dict[str, Any]) -> str | None:
    message = data.get("message") if isinstance(data.get("message"), dict) else {}
    if kind == "user/message" and message.get("source") in PERSON_SOURCES:
        text = user_text(message).strip()
        images = [p for p in image_placeholders(message) if p not in text]
        text = "\n\n".join(part for part in (text, "\n".join(images)) if part)
        return f"## You\n\n{text}" if text else None
    if kind == "assistant/message":
        text = assistant_text(message).strip()
        return f"## Agent\n\n{text}" if text else None
    if kind == "tool/call":
        return f"- `{data.get('name', 'tool')}` {call_arguments(data.get('arguments'))}".rstrip()
    if kind == "tool/result":
        error = data.get("error") or {}
        if error or message.get("isError"):
            return f"  - `{data.get('name', 'tool')}` failed: {first_line(str(error.get('message') or 'failed'), 'failed')}"
        return None
    if kind == "turn/end":
        reason = data.get("reason") or {}
        if reason.get("kind") == "error":
            failure = reason.get("error") or {}
            return f"*Turn {data.get('turn')} ended with an error: {failure_text(failure)}*"
        if reason.get("kind") in ("aborted", "interrupted"):
            return f"*Turn {data.get('turn')} was {reason['kind']}.*"
    return None


