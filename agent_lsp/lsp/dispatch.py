"""The custom requests registered from the method table.

Each entry of `protocol.CLIENT_REQUESTS` is `method: (params model, result
model)`; each feature module names its handlers in a `REQUESTS` dict, `method:
handler`. `serve_requests` registers every handler under its method and hands
the table to the JSON-RPC layer (`rpc.AgentProtocol.serve`), which validates
a request's params with the entry's model before the handler runs (a problem
is -32602 with a readable message, the handler does not run) and dumps what
the handler returns by the entry's result model. It refuses to start when the
two disagree: a method of the table with no handler, a handler of no method,
or two handlers of one method. The requests both faces answer the same way
(`agent_lsp.service.requests`) have one handler each, their service method
(`shared_handlers`).

A handler is `(ls, params) -> result`, a coroutine function or a plain one
(pygls answers a plain one as the message is read, not a loop turn later):

    async def followup(ls: AgentLanguageServer, p: wire.FollowupParams) -> wire.MessageRef: ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

from pydantic import BaseModel

from agent_lsp.lsp.wire_base import WireModel

if TYPE_CHECKING:
    from agent_lsp.service.requests import SharedRequest

Handler = Callable[[Any, Any], Any]
Table = Mapping[str, "tuple[type[BaseModel], type[BaseModel]]"]


class Serving(Protocol):
    """What registration uses of the language server (lsp/language_server.py)."""

    protocol: Any  # rpc.AgentProtocol: `serve(table)` parses params and dumps results by the table
    service: Any  # the application service (agent_lsp.service.AgentService)

    def feature(self, method: str) -> Callable[[Handler], Handler]: ...

    async def ready(self) -> None:
        """Until settings the client is sending are applied."""


class TableMismatch(Exception):
    """The method table and the registered handlers do not agree."""


@dataclass(frozen=True)
class WithEvents:
    """A result whose `events` go out as the session log holds them: validating
    (or serialising again) a long session's events would cost more than the rest."""

    result: WireModel
    events: list[dict[str, Any]]


def merged(tables: Iterable[Mapping[str, Handler]]) -> dict[str, Handler]:
    """The feature modules' handlers by method; a method named twice is refused."""
    handlers: dict[str, Handler] = {}
    for table in tables:
        for method, handler in table.items():
            if method in handlers:
                raise TableMismatch(f"{method} has two handlers: {handlers[method].__qualname__} and {handler.__qualname__}")
            handlers[method] = handler
    return handlers


def shared_handlers(shared: Mapping[str, SharedRequest]) -> dict[str, Handler]:
    """The handlers of the requests both faces answer the same way: their service method."""
    from pygls.exceptions import JsonRpcInvalidParams

    from agent_lsp.service.requests import InvalidParams

    def handler_of(request: SharedRequest) -> Handler:
        async def handler(ls: Serving, params: Any) -> Any:
            if request.settled:
                await ls.ready()
            try:
                return await request.call(ls.service, params)
            except InvalidParams as error:
                raise JsonRpcInvalidParams(str(error)) from None
        return handler

    return {method: handler_of(request) for method, request in shared.items()}


def check(table: Table, handlers: Mapping[str, Handler]) -> None:
    problems = []
    missing = [method for method in table if method not in handlers]
    unknown = [method for method in handlers if method not in table]
    if missing:
        problems.append("no handler for " + ", ".join(missing))
    if unknown:
        problems.append("handlers of methods not in the table: " + ", ".join(unknown))
    if problems:
        raise TableMismatch("; ".join(problems))


def serve_requests(server: Serving, table: Table, handlers: Mapping[str, Handler]) -> None:
    """Register the handler of every method of `table` (after `check`); the
    protocol parses their params and dumps their results by the table."""
    check(table, handlers)
    server.protocol.serve(table)
    for method in table:
        server.feature(method)(handlers[method])
