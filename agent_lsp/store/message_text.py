"""The text a person wrote or read in a stored message: what titles and the
search index are made of (the words of the sender and of the model's answer,
not attached context, reasoning or tool calls)."""

from __future__ import annotations

from typing import Any

# The user messages a person wrote (a followup, a steer, an injected message);
# the loop's own (tool, plugin, runtime-context, compaction) are not.
PERSON_SOURCES = (None, "user")


def _is_context_block(block: dict[str, Any]) -> bool:
    text = block.get("text")
    return isinstance(text, str) and text.startswith("<context>\n") and text.endswith("</context>")


def user_text(message: dict[str, Any]) -> str:
    """The sender's own words: the text blocks of a user message without the
    context blocks `make_message` appends for the attached context items
    (file, selection, diagnostic; verbatim in `context`)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    blocks = [b for b in content or () if isinstance(b, dict)]
    context = message.get("context")
    attached = len(context) if isinstance(context, list) else 0
    if attached:
        blocks = blocks[:-attached] if attached < len(blocks) else []  # appended last, one block per item
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "text" and not _is_context_block(b))


def assistant_text(message: dict[str, Any]) -> str:
    """The text blocks of an assistant message (its answer, not its reasoning or tool calls)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content or ()
                     if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))


def searchable_text(event_type: str, data: dict[str, Any]) -> str | None:
    """The text of a `user/message` a person wrote or of an `assistant/message`; None for other events."""
    message = data.get("message")
    if not isinstance(message, dict):
        return None
    if event_type == "user/message":
        return user_text(message) if message.get("source") in PERSON_SOURCES else None
    if event_type == "assistant/message":
        return assistant_text(message)
    return None
