"""The images of a request's history read back from the session's files.

A user message keeps an image as a reference (`{"type": "image", "mediaType",
"file", "name"?, "size"?}`, the file in the session's folder of files,
`store/files.py`) beside a text placeholder; the request sent to the model
gets the bytes (`data`, base64) in place of the reference. An image whose
file is gone stays a reference: the providers send its placeholder only."""

from __future__ import annotations

import base64
import functools
import logging
from pathlib import Path
from typing import Any

from agent_lsp.store import files

log = logging.getLogger(__name__)


def with_image_data(messages: list[dict[str, Any]], folder: Path | None) -> list[dict[str, Any]]:
    if folder is None:
        return messages
    out = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list) and any(
                b.get("type") == "image" and b.get("file") for b in content):
            message = {**message, "content": [_with_data(b, folder) for b in content]}
        out.append(message)
    return out


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
