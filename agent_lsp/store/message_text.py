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
    (file, selection, diagnostic; verbatim in `context`) and without the
    placeholders of its images (which are its words when it has no others)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    blocks = [b for b in content or () if isinstance(b, dict)]
    context = message.get("context")
    attached = len(context) if isinstance(context, list) else 0
    if attached:
        blocks = blocks[:-attached] if attached < len(blocks) else []  # appended last, one block per item
    placeholders = _placeholder_indexes(blocks)
    own = "".join(b.get("text", "") for i, b in enumerate(blocks)
                  if b.get("type") == "text" and not _is_context_block(b) and i not in placeholders)
    if own.strip() or not placeholders:
        return own
    return " ".join(blocks[i]["text"] for i in sorted(placeholders))  # images alone: what they are


def image_placeholders(message: dict[str, Any]) -> list[str]:
    """The placeholder (`[image: shot.png, image/png, 12 KB]`) of each image a user
    message's content refers to (the server writes one before each image it stores)."""
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    return [blocks[i]["text"] for i in sorted(_placeholder_indexes(blocks))]


def _placeholder_indexes(blocks: list[dict[str, Any]]) -> set[int]:
    """The text blocks that stand for the stored image after them."""
    return {i for i in range(len(blocks) - 1) if blocks[i].get("type") == "text" and blocks[i + 1].get("type") == "image"
            and isinstance(blocks[i + 1].get("file"), str)}


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
