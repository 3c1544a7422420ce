"""The images of a request's history read back from the session's files.

A user message keeps an image as a reference (`{"type": "image", "mediaType",
"file", "name"?, "size"?}`, the file in the session's folder of files,
`store/files.py`) beside a text placeholder; the request sent to the model
gets the bytes (`data`, base64) in place of the reference. An image whose
file is gone stays a reference: the providers send its placeholder only.

Images cost the model's context at every step they are sent, so only the
images of the last `keep_turns` user messages are: an older one becomes a
short note beside its placeholder (`OLD_IMAGE_NOTE`), which the model can
ask about; the stored file, the log and the transcripts keep it."""

from __future__ import annotations

import base64
import functools
import logging
from pathlib import Path
from typing import Any

from agent_lsp.store import files

log = logging.getLogger(__name__)

# What a request holds in place of an image older than the turns it is sent for.
OLD_IMAGE_NOTE = " (an image of an earlier turn, no longer sent to the model; ask the user to attach it again if you need it)"

# Roughly what one image costs a model's context (a 1-2 megapixel image: about
# 1,600 tokens for Anthropic, 765 to 1,105 for OpenAI's high detail), for the
# estimate that decides when to compact.
IMAGE_TOKENS = 1600

# Messages of the user's role that are not a turn the user started.
_NOT_TURNS = ("runtime-context", "compaction")


def with_image_data(messages: list[dict[str, Any]], folder: Path | None,
                    keep_turns: int | None = None) -> list[dict[str, Any]]:
    """The messages with the bytes of the images of the last `keep_turns` user
    messages (every image when None) and a note in place of each older image."""
    if folder is None:
        return messages
    recent = recent_start(messages, keep_turns)
    out = []
    for index, message in enumerate(messages):
        content = message.get("content")
        if _has_stored_image(message):
            if index >= recent:
                content = [_with_data(b, folder) for b in content]
            else:
                content = [_note_of(b) for b in content]
            message = {**message, "content": content}
        out.append(message)
    return out


def recent_start(messages: list[dict[str, Any]], keep_turns: int | None) -> int:
    """The index of the first message whose images are still sent: the
    `keep_turns`-th user message from the end (0 when there are fewer, or no limit)."""
    if keep_turns is None:
        return 0
    if keep_turns <= 0:
        return len(messages)
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and message.get("source") not in _NOT_TURNS:
            seen += 1
            if seen == keep_turns:
                return index
    return 0


def images_sent(messages: list[dict[str, Any]], keep_turns: int | None) -> int:
    """How many stored images a request of these messages sends."""
    return sum(1 for m in messages[recent_start(messages, keep_turns):] if _has_stored_image(m)
               for b in m["content"] if b.get("type") == "image" and b.get("file"))


def dropped_images_note(shadowed: list[dict[str, Any]]) -> str:
    """A compaction checkpoint's line about the images of the messages it
    replaces: no longer sent (the session's files and transcript keep them)."""
    names = list(dict.fromkeys(str(b.get("name") or b["file"]) for m in shadowed if _has_stored_image(m)
                               for b in m["content"] if b.get("type") == "image" and b.get("file")))
    if not names:
        return ""
    return (f"\n\n[The compacted conversation held {len(names)} image{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}), no longer shown to the model; ask the user to attach one again if it is needed.]")


def _has_stored_image(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "image" and b.get("file") for b in content)


def _note_of(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") != "image" or not block.get("file"):
        return block
    return {"type": "text", "text": OLD_IMAGE_NOTE}


def _with_data(block: dict[str, Any], folder: Path) -> dict[str, Any]:
    if block.get("type") != "image" or not block.get("file"):
        return block
    try:
        data = _encoded(folder, block["file"])
    except OSError as error:
        log.warning("the image %s of the session is not readable: %s", block["file"], error)
        return block
    return {**block, "data": data}


@functools.lru_cache(maxsize=16)
def _encoded(folder: Path, name: str) -> str:
    """A stored image's bytes, base64: read once, not at every step of every turn
    (the files are named by their content, so what is read stays true)."""
    return base64.b64encode(files.read(folder, name)).decode("ascii")
