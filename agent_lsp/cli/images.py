"""Images the user attaches on the command line (`run --image PATH`, `/image PATH` in
`chat`): read here, by the client, and sent as image blocks (base64 and the file's
name); the server checks them and says what is wrong with one. A transcript
shows each image a user message holds on a line of its own, with the path of
the file the server keeps it in (`<id>.files/` beside the session's log)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from agent_lsp.cli.settings_arg import UsageError
from agent_lsp.llm.images import size_text


def image_block(path: str) -> dict[str, Any]:
    """The image block for the file at `path`; UsageError when it cannot be read."""
    file = Path(path).expanduser()
    try:
        data = file.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read the image {path}: {error.strerror or error}") from None
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "name": file.name}


def with_images(text: str, images: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A message's content: the text alone, or the text and the images."""
    return [{"type": "text", "text": text}, *images] if images else text


def user_text(content: Any) -> str:
    """A user message's words: its text blocks without the placeholder the server
    writes before each image it stored (the image gets a line of its own)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    blocks = [b for b in content if isinstance(b, dict)]
    return "".join(b.get("text", "") for i, b in enumerate(blocks) if b.get("type") == "text"
                   and not (i + 1 < len(blocks) and _is_stored_image(blocks[i + 1])))


def stored_images(content: Any) -> list[dict[str, Any]]:
    """The references to stored images a user message's content holds."""
    return [b for b in content if _is_stored_image(b)] if isinstance(content, list) else []


def image_line(block: dict[str, Any], folder: Path | None) -> str:
    """`[image: shot.png, 12 KB] /…/<id>.files/<sha256>.png`: what it is and where it is kept
    (the file's name alone while the session's folder is not known)."""
    label = ", ".join(str(x) for x in (block.get("name"), _size(block.get("size"))) if x)
    where = str(folder / block["file"]) if folder is not None else block["file"]
    return f"[image: {label or block.get('mediaType', 'image')}] {where}"


def _is_stored_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image" and isinstance(block.get("file"), str)


def _size(size: Any) -> str | None:
    return size_text(size) if isinstance(size, int) else None
