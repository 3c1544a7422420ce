"""The image content block of a user's message on the wire (agent/followup, agent/steer)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_lsp.lsp.wire_base import WireModel


class ImageBlock(WireModel):
    """An image the user sends: its bytes (`data`, base64) or a file inside the workspace
    (`uri`, a file URI or a path relative to the folder). PNG, JPEG, GIF or WebP, known
    from the bytes; at most 5 MB. Stored once beside the session log: the session's
    events hold `{type: "image", mediaType, file, name?, size}` instead (docs/protocol.md)."""

    type: Literal["image"]
    data: str | None = Field(default=None, description="the image's bytes, base64")
    media_type: str | None = Field(default=None, description="what the client believes it is (the bytes decide)")
    uri: str | None = Field(default=None, description="instead of data: a file inside the workspace")
    name: str | None = Field(default=None, description="the file name to show")


class SessionFileParams(WireModel):
    session_id: str
    file: str = Field(description="an image block's `file`: the name of the file beside the session log")


class SessionFileResult(WireModel):
    """A file a session's messages refer to (an image the user sent)."""

    media_type: str
    data: str = Field(description="the bytes, base64")
    size: int
