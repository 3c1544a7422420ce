"""Images the user attaches on the command line (`run --image PATH`, `/image PATH` in
`chat`): read here, by the client, and sent as image blocks (base64 and the file's
name); the server checks them and says what is wrong with one."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from agent_lsp.cli.settings_arg import UsageError


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
