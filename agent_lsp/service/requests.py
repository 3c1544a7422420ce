"""Requests both faces answer the same way, from one table.

An entry names a request's params and result models and the `AgentService`
method that answers it. The LSP face serves every entry under its method
(`lsp/protocol.py` adds them to its method table, so the schema and the
clients' generated types have them); the ACP face serves the same entries as
extension methods (`_` + the method). A request of this table needs no code
in either face: its entry, its service method and the models.

The models are `Shape`s: camelCase keys on the wire, optional fields without
a value left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

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


class SessionExportParams(Shape):
    session_id: str


class SessionExportResult(Shape):
    """A session as a Markdown document (agent_lsp/views/markdown.py)."""

    title: str | None = Field(default=None, description="the session's title, when it has one")
    markdown: str = Field(description="its title, what the user wrote, the answers, the tools run and what failed")


SHARED_REQUESTS: dict[str, SharedRequest] = {
    "agent/session/export": SharedRequest(SessionExportParams, SessionExportResult,
                                          lambda service, p: service.export_session(p)),
}


def validation_problem(error: ValidationError) -> str:
    """One readable line per problem of the params: which field, what was wrong."""
    return "; ".join(f"{'.'.join(str(p) for p in item['loc']) or 'params'}: {item['msg']}" for item in error.errors())


def dump(result: BaseModel) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)
