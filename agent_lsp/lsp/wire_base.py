"""The base of every wire model and the LSP pieces they share (agent_lsp.lsp.protocol re-exports them)."""

from __future__ import annotations

from typing import Any

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
