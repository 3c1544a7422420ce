"""The JSON-RPC layer under the handlers: how messages are structured and how
bad params are answered.

pygls does the JSON-RPC; this module adjusts it where an agent server needs
something else: params of custom methods stay plain JSON (our pydantic models
validate them, `parse`), and a request whose params pygls cannot structure
gets an InvalidParams answer instead of none.
"""

from __future__ import annotations

from typing import Any, TypeVar

from cattrs import ClassValidationError, transform_error
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerError
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)

from agent_lsp.lsp import protocol as wire
from agent_lsp.store.lock import SessionLockedError

M = TypeVar("M", bound=BaseModel)


def raw_params_converter():
    """pygls' converter, but params/results of custom methods stay plain dicts
    (the default turns them into namedtuples); the pydantic models validate them."""
    converter = default_converter()
    converter.register_structure_hook(JsonRPCRequestMessage, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    return converter


class _Unreadable:
    """A request whose params pygls could not structure: answered with InvalidParams."""

    def __init__(self, msg_id: Any, message: str):
        self.id = msg_id
        self.message = message


class AgentProtocol(LanguageServerProtocol):
    """pygls' protocol, except that a request with malformed params gets an
    InvalidParams answer naming the problem (pygls logs it and never answers,
    which leaves the client waiting forever)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "id" in data and "method" in data:
                return _Unreadable(data["id"], _structure_problem(data["method"], error))
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Unreadable):
            self._send_response(message.id, None, JsonRpcInvalidParams(message.message).to_response_error())
            return
        super().handle_message(message)


def _structure_problem(method: str, error: Exception) -> str:
    cause = error.__cause__
    if isinstance(cause, ClassValidationError):
        details = "; ".join(transform_error(cause, path="request")[:5])
        return f"invalid params for {method}: {details}"
    return f"invalid params for {method}"


class SessionInUse(JsonRpcServerError):
    """The session is open in another agent-lsp process (another editor window on
    the same folder); `data` names that process."""

    CODE = wire.SESSION_IN_USE_CODE

    def __init__(self, error: SessionLockedError):
        super().__init__(str(error), code=self.CODE, data={"sessionId": error.session_id, "pid": error.pid})


def parse(model: type[M], params: Any) -> M:
    """Validate custom params; a problem becomes InvalidParams with a readable message."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(f"params must be an object, got {type(params).__name__}")
    try:
        return model.model_validate(params)
    except ValidationError as error:
        raise JsonRpcInvalidParams(wire.describe_validation_error(error)) from None
