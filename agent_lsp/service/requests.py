"""Requests both faces answer the same way, from one table.

An entry names a request's params and result models and the `AgentService`
method that answers it. The LSP face serves every entry under its method
(`lsp/protocol.py` adds them to its method table, so the schema and the
clients' generated types have them); the ACP face serves the same entries as
extension methods (`_` + the method). A request of this table needs no code
in either face: its entry, its service method and the models.

The models are `Shape`s: camelCase keys on the wire, optional fields without
a value left out. A service method refuses bad params with `InvalidParams`,
which each face answers as its own invalid-params error (-32602).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel


class Shape(BaseModel):
    """A model both faces send as it is (the LSP face's `WireModel` has the same configuration)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True)


@dataclass(frozen=True)
class SharedRequest:
    params: type[BaseModel]
    result: type[BaseModel]
    # (service, params) -> result: a method of agent_service.AgentService, which imports this module
    call: Callable[[Any, Any], Awaitable[BaseModel]]
    # answered once settings the client is sending are applied (the LSP face's pull after a change)
    settled: bool = False


class InvalidParams(ValueError):
    """Params a service method refuses (the message says which field and why)."""


class Position(Shape):
    """LSP position (zero-based; character in the negotiated encoding, UTF-16 by default)."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(Shape):
    start: Position
    end: Position


class SessionExportParams(Shape):
    session_id: str


class SessionExportResult(Shape):
    """A session as a Markdown document (agent_lsp/views/markdown.py)."""

    title: str | None = Field(default=None, description="the session's title, when it has one")
    markdown: str = Field(description="its title, what the user wrote, the answers, the tools run and what failed")


# ----------------------------------------------------------------- edit review


class PendingHunkInfo(Shape):
    """An agent edit's hunk waiting for the user ("edits.review": "review"), where it is now."""

    session_id: str
    hunk_id: str
    uri: str
    range: Range = Field(description="its whole lines in the buffer as it is now (character 0 to character 0 of "
                         "the line after; start = end: lines were deleted there)")
    turn: int
    call_id: str
    old_text: str = Field(description="what undo puts back")
    new_text: str


class ReviewListParams(Shape):
    session_id: str | None = Field(default=None, description="no sessionId: every session's")
    uri: str | None = Field(default=None, description="only this document's")


class ReviewListResult(Shape):
    hunks: list[PendingHunkInfo]


class ReviewResolveParams(Shape):
    """Keep or undo one hunk (`hunkId`), a document's (`uri`) or all of a session's (`all: true`)."""

    session_id: str
    action: Literal["keep", "undo"]
    hunk_id: str | None = None
    uri: str | None = None
    all: bool = False


class ReviewSkip(Shape):
    hunk_id: str
    reason: str


class ReviewResolveResult(Shape):
    resolved: list[str] = Field(description="the hunk ids kept or undone")
    skipped: list[ReviewSkip]


SHARED_REQUESTS: dict[str, SharedRequest] = {
    "agent/session/export": SharedRequest(SessionExportParams, SessionExportResult,
                                          lambda service, p: service.export_session(p)),
    "agent/review/list": SharedRequest(ReviewListParams, ReviewListResult,
                                       lambda service, p: service.review_list(p), settled=True),
    "agent/review/resolve": SharedRequest(ReviewResolveParams, ReviewResolveResult,
                                          lambda service, p: service.review_resolve(p), settled=True),
}


def validation_problem(error: ValidationError) -> str:
    """One readable line per problem of the params: which field, what was wrong."""
    return "; ".join(f"{'.'.join(str(p) for p in item['loc']) or 'params'}: {item['msg']}" for item in error.errors())


def dump(result: BaseModel) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)
