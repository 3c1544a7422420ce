"""An ACP prompt's blocks as the text the model reads (images go their own way: acp/images.py)."""

from __future__ import annotations

from typing import Any


def prompt_text(blocks: list[Any]) -> str:
    """The prompt as the model's text: text blocks as they are, a resource link as
    its URI, an embedded text resource (a file the user attached) fenced with its URI."""
    parts = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"\n<file uri=\"{resource.uri}\">\n{text}\n</file>\n")
            else:
                parts.append(f"[{resource.uri}]")
    return "".join(parts)
