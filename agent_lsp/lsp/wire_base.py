"""The base of every wire model and the pieces they share: LSP positions, a message's content and
context items (agent_lsp.lsp.protocol re-exports them)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Base of every wire model: camelCase on the wire, snake_case in Python.
    Unknown keys are ignored so that newer clients can talk to older servers."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True)


def wire_dump(model: BaseModel) -> dict[str, Any]:
    """The JSON object for the wire (aliases, optional fields left out when None)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def describe_validation_error(error: ValidationError) -> str:
    """One readable line per problem: which field, what was wrong."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "params"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


class Position(WireModel):
    """LSP position (zero-based; character in the negotiated encoding, UTF-16 by default)."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(WireModel):
    start: Position
    end: Position


class ContentBlock(WireModel):
    """A content block of a user message (the blocks of llm/types.py); `text` for text blocks."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True)
    type: str
    text: str | None = None


class ImageBlock(WireModel):
    """An image the user sends: its bytes (`data`, base64) or a file inside the workspace
    (`uri`, a file URI or a path relative to the folder). PNG, JPEG, GIF or WebP, known
    from the bytes; at most 5 MB. Stored once beside the session log: the session's
    events hold `{type: "image", mediaType, file, name?, size}` instead (docs/protocol.md)."""

    type: Literal["image"]
    data: str | None = Field(default=None, description="the image's bytes, base64")
    media_type: str | None = Field(default=None, description="what the client believes it is (the bytes decide)")
    uri: str | None = Field(default=None, description="instead of data: a file inside the workspace")
    file: str | None = Field(default=None, description="instead of data: an image the session keeps (the `file` of "
                             "a reference its events hold), to send a message of the transcript again")
    name: str | None = Field(default=None, description="the file name to show")


Content = Union[str, list[Annotated[Union[ImageBlock, ContentBlock], Field(union_mode="left_to_right")]]]


class ContextItem(WireModel):
    """Something the user attached to a message: a file, a selection, a diagnostic,
    or an MCP server's resource (`@server:uri` in the text, see docs/mcp.md)."""

    kind: Literal["file", "selection", "diagnostic", "mcp-resource"]
    uri: str
    range: Range | None = None
    text: str | None = None
    message: str | None = Field(default=None, description="the diagnostic's message")
    server: str | None = Field(default=None, description="mcp-resource: the MCP server it was read from")
    note: str | None = Field(default=None, description="mcp-resource: why it could not be attached, or that it was cut")


class Empty(WireModel):
    pass
