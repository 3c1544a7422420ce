"""Images on the wire: the block a user's message sends them in (`ImageBlock`, with
the other content blocks in wire_base.py), and agent/session/file, which gives a
client the bytes of one a session refers to."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.lsp.wire_base import ImageBlock, WireModel  # noqa: F401 (ImageBlock: re-exported)


class SessionFileParams(WireModel):
    session_id: str
    file: str = Field(description="an image block's `file`: the name of the file beside the session log")


class SessionFileResult(WireModel):
    """A file a session's messages refer to (an image the user sent)."""

    media_type: str
    data: str = Field(description="the bytes, base64")
    size: int
