"""A user's message between the wire and the service: the params' content and
context items as the service takes them (`agent_lsp.service.Message`), and a
queued message as the wire's `MessageRef`."""

from __future__ import annotations

from typing import Any

from agent_lsp.lsp import protocol as wire
from agent_lsp.service import Message, Queued


def message(content: wire.Content, context: list[wire.ContextItem] | None = None) -> Message:
    return Message(content_value(content), [wire.wire_dump(item) for item in context] if context else None)


def content_value(content: wire.Content) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else [wire.wire_dump(block) for block in content]


def message_ref(queued: Queued) -> wire.MessageRef:
    return wire.MessageRef(session_id=queued.session_id, message_id=queued.message_id)
