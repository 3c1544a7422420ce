"""A prompt's image content blocks as the service's image blocks (`service/images.py`)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any


def prompt_images(blocks: list[Any]) -> list[dict[str, Any]]:
    """`{type: "image", data, mediaType, name?}` for each image block of the prompt
    (its name: the last part of its `uri`, when it has one)."""
    out = []
    for block in blocks:
        if getattr(block, "type", None) != "image":
            continue
        image: dict[str, Any] = {"type": "image", "data": block.data or "", "mediaType": block.mime_type}
        uri = getattr(block, "uri", None)
        if uri:
            image["name"] = PurePosixPath(uri.rstrip("/")).name or uri
        out.append(image)
    return out
