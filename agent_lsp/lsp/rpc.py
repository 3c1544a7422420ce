"""The JSON-RPC layer under the handlers: how messages are structured and how
bad params are answered.

pygls does the JSON-RPC; this module adjusts it where an agent server needs
something else: params of custom methods stay plain JSON (our pydantic models
validate them, `parse`), and every message with an id gets exactly one answer
with the right code, never a traceback (see docs/protocol.md, "Errors"):

- not JSON (`NaN` and `Infinity` included), or nested too deeply to parse:
  -32700; not a JSON-RPC 2.0 request, notification or response
  (wrong `jsonrpc`, a `method` that is not a string, an id that is not an
  integer or string, a notification method sent with an id, a request after
  `shutdown`, a frame too large to read): -32600;
- params pygls cannot structure: -32602 naming the field (pygls logs it and
  never answers, which leaves the client waiting forever);
- params of a method of our table (`serve`) that its model refuses: -32602
  with the model's readable message, before the handler runs; the handler's
  result is dumped by the table's result model;
- an unexpected exception in a handler: -32603 with a fixed message; the
  traceback goes to the log (pygls would send it, with server paths, in
  `error.data`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from typing import Any, Callable, Generator, TypeVar
from urllib.parse import unquote

from cattrs import ClassValidationError, transform_error
from pydantic import BaseModel, ValidationError
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerError,
)
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.language_server import lsp_method

from agent_lsp.jsonrpc import (INTERNAL_ERROR_MESSAGE, MAX_ERROR_MESSAGE, envelope_problem, invalid_text, loads, not_unicode,
                               parse_problem)
from agent_lsp.jsonrpc import brief as _brief
from agent_lsp.jsonrpc import json_type as _json_type
from agent_lsp.jsonrpc import valid_id as _valid_id
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.apply_edit_params import register_agent_member
from agent_lsp.lsp.dispatch import Table, WithEvents
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.damaged import describe
from agent_lsp.store.lock import SessionLockedError

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

LARGE_MESSAGE_BYTES = 2**20
NOTIFICATIONS = frozenset(
    method for method, (message_type, *_) in types.METHOD_TO_TYPES.items() if message_type.__name__.endswith("Notification")
)


def raw_params_converter():
    """pygls' converter, but params/results of custom methods stay plain dicts
    (the default turns them into namedtuples); the pydantic models validate them."""
    converter = default_converter()
    converter.register_structure_hook(JsonRPCRequestMessage, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    register_agent_member(converter)  # workspace/applyEdit's agentLsp member
    return converter


class _Unreadable:
    """A request whose params pygls could not structure: answered with InvalidParams."""

    def __init__(self, msg_id: Any, message: str):
        self.id = msg_id
        self.message = message


class _UnreadableAnswer:
    """An answer to one of our requests whose result pygls could not structure."""

    def __init__(self, msg_id: Any):
        self.id = msg_id


class AgentProtocol(LanguageServerProtocol):
    """pygls' protocol, with every message with an id answered exactly once."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._client_requests: set[Any] = set()  # the client's requests not answered yet (pygls' table mixes in its own)
        self._large_requests: set[Any] = set()  # those of them over LARGE_MESSAGE_BYTES
        self._table: Table = {}  # our methods: params and result models (`serve`)
        self._results: dict[Any, type[BaseModel]] = {}  # the result model of each of our requests not answered yet
        self.exit_received = False
        # Where one process serves several connections (the agent host, `agent_lsp.daemon`):
        # called with the exit code on `exit`, which then ends this connection, not the process.
        self.end_connection: Callable[[int], None] | None = None

    def serve(self, table: Table) -> None:
        """Parse the params of these methods with their models before the
        handlers run; dump the handlers' results by their result models."""
        self._table = table

    def answering(self) -> bool:
        """Whether a request of the client waits for its answer."""
        return bool(self._client_requests)

    def receive(self, body: bytes) -> None:
        """Handle one message body as read from the wire (pygls' loop does
        `json.loads(body, object_hook=structure_message)` and drops what fails)."""
        try:
            data = loads(body)
        except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
            self.send_error(None, JsonRpcParseError(parse_problem(error)))
            return
        problem = self._envelope_problem(data)
        if problem is not None:
            msg_id = data.get("id") if isinstance(data, dict) and _valid_id(data.get("id")) else None
            if isinstance(data, dict) and "id" not in data:  # a broken notification: nobody to answer
                log.warning("dropped a message: %s", problem)
                return
            self.send_error(msg_id, JsonRpcInvalidRequest(f"invalid request: {problem}"))
            return
        if "id" in data and "method" in data:
            self._client_requests.add(data["id"])
            if len(body) > LARGE_MESSAGE_BYTES:
                self._large_requests.add(data["id"])
        self.handle_message(self.structure_message(data))
        if data.get("method") == types.EXIT:
            self.exit_received = True
        if data.get("method") == types.SHUTDOWN and "id" in data:
            # pygls sets this once the shutdown handler is done; a request or an
            # `exit` sent meanwhile must already see it (refused / exit code 0).
            self._shutdown = True

    def _envelope_problem(self, data: Any) -> str | None:
        problem = envelope_problem(data)
        if problem is not None:
            return problem
        method = data.get("method")
        if method is not None and "id" in data:
            if method in NOTIFICATIONS:
                return f"{method} is a notification: send it without an id"
            if self._shutdown and method != types.EXIT:
                return "the server is shutting down (shutdown was received)"
        return None

    def reject_oversized(self, length: int, limit: int) -> None:
        self.send_error(None, JsonRpcInvalidRequest(f"invalid request: a message of {length} bytes is over the limit of {limit}; skipped"))

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        if msg_id is None:  # pygls would leave out `"id": null`, which JSON-RPC requires here
            self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": error.code, "message": error.message}})
            return
        self._send_response(msg_id, None, error.to_response_error())

    def expect_response(self, msg_id: str) -> asyncio.Future:
        """The answer to a request written to the client before this protocol
        existed (the early phase's `workspace/configuration`), matched by its id
        as pygls matches the answers to its own requests."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._request_futures[msg_id] = future
        return asyncio.wrap_future(future)

    async def settle_requests(self, grace_s: float) -> None:
        """Let the client's requests in flight finish (at most `grace_s`), then
        cancel the rest and wait until their answers are sent: every request
        gets its answer, even when `exit` follows `shutdown` at once."""
        current = self.msg_id
        futures = [self._request_futures.get(msg_id) for msg_id in list(self._client_requests) if msg_id != current]
        pending = [asyncio.wrap_future(f) if isinstance(f, concurrent.futures.Future) else f
                   for f in futures if f is not None and not f.done()]
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=grace_s)
        for future in late:
            future.cancel()
        if late:
            await asyncio.wait(late, timeout=1.0)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' shutdown, except that it does not cancel every other pending
        handler once ours returns: ours has settled the client's requests
        (`settle_requests`), and what is left, an `exit` received meanwhile
        among them, must run."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        self._shutdown = True
        return None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' exit (which ends the process), or, for one of several connections
        of a process, the end of this connection alone (`end_connection`)."""
        if self.end_connection is None:
            yield from super().lsp_exit(*args)
            return
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        self.end_connection(0 if self._shutdown else 1)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        """pygls' didChange, except that a change to a document that is not open
        is dropped instead of failing with a KeyError (VS Code sends one when an
        unsaved untitled buffer is closed without saving)."""
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.debug("didChange for %s, which is not open: ignored", params.text_document.uri)
            return None
        yield from super().lsp_text_document__did_change(params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "id" in data and "method" in data:
                return _Unreadable(data["id"], _structure_problem(data["method"], error))
            if "id" in data and "error" not in data:
                return _UnreadableAnswer(data["id"])
            raise

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        entry = self._table.get(method_name)
        if entry is None:
            super()._handle_request(msg_id, method_name, params)
            return
        try:
            params = parse(entry[0], params)
        except JsonRpcInvalidParams as error:
            # Answered as the handler's own error would be: a coroutine's a loop turn
            # later (after what was read before it), a plain function's at once.
            handler = self.fm.features.get(method_name)
            refuse = _refuse_later if asyncio.iscoroutinefunction(handler) else _refuse
            self._execute_handler(msg_id=msg_id, handler=refuse, args=(error,),
                                  callback=functools.partial(self._send_handler_result, msg_id=msg_id))
            return
        self._results[msg_id] = entry[1]
        super()._handle_request(msg_id, method_name, params)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        entry = self._table.get(method_name)
        if entry is not None:
            try:
                params = parse(entry[0], params)
            except JsonRpcInvalidParams as error:  # nobody to answer
                log.warning("dropped %s, sent as a notification: %s", method_name, error.message)
                return
        super()._handle_notification(method_name, params)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Unreadable):
            self.send_error(message.id, JsonRpcInvalidParams(message.message))
            return
        if isinstance(message, _UnreadableAnswer):
            # An answer to our request in a shape we cannot read (a `null` for
            # workspace/configuration's list): the request fails now rather than
            # leaving its waiter to a timeout.
            future = self._request_futures.pop(message.id, None)
            if future is not None and not future.done():
                future.set_exception(JsonRpcInvalidParams("the client's answer has an unexpected shape"))
            return
        super().handle_message(message)

    def _send_data(self, data: Any) -> None:
        # The results and params of our own methods are plain JSON already; pygls would
        # first copy them through cattrs (most of the time of a long replay page or of a
        # busy relay's notification). Typed LSP messages (attrs classes) go pygls' way.
        if data.__class__ is JsonRPCResponseMessage and isinstance(data.result, (dict, list)):
            data = {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
        elif data.__class__ is JsonRPCNotification and isinstance(data.params, dict):
            data = {"method": data.method, "jsonrpc": data.jsonrpc, "params": data.params}
        super()._send_data(data)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if _valid_id(msg_id):
            result_model = self._results.pop(msg_id, None)
            if result_model is not None and error is None:
                result = _dumped(result_model, result)  # raising here: pygls answers -32603
            self._client_requests.discard(msg_id)
            if msg_id in self._large_requests:
                self._large_requests.discard(msg_id)
                # What a failed handler leaves (exception, traceback, frames holding the params)
                # is a reference cycle: free it now rather than at some later collection.
                try:
                    asyncio.get_running_loop().call_soon(self._server.process.release_memory)
                except RuntimeError:  # answered from a worker thread: let the collector do it
                    pass
        if error is not None and error.code == JsonRpcInternalError.CODE:
            # pygls has logged the traceback; its message and data name server files.
            error = JsonRpcInternalError(INTERNAL_ERROR_MESSAGE).to_response_error()
        elif error is not None and len(error.message) > MAX_ERROR_MESSAGE:  # it may quote a huge param
            error.message = _brief(error.message, MAX_ERROR_MESSAGE)
        super()._send_response(msg_id, result, error)


def _refuse(error: JsonRpcInvalidParams) -> None:
    raise error


async def _refuse_later(error: JsonRpcInvalidParams) -> None:
    raise error


def _dumped(result_model: type[BaseModel], value: Any) -> dict[str, Any]:
    """A handler's result on the wire, by its method's result model."""
    if isinstance(value, WithEvents):
        out = _dumped(result_model, value.result)
        out["events"] = value.events
        return out
    if not isinstance(value, result_model):  # a fault of ours
        raise TypeError(f"a handler returned {type(value).__name__}, not {result_model.__name__}")
    return wire.wire_dump(value)


def refused(error: BaseException | None) -> bool:
    """Whether `error` is an answer a handler chose (bad params, an unknown or
    busy session): the client's request refused with a reason, not a fault."""
    return isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError)


class RefusalLogFilter(logging.Filter):
    """pygls logs every error a handler raises at ERROR with its traceback (and,
    for some, the request's params). For a refusal that is noise in the user's
    server log, and params may hold text the user typed: the client has the
    message, the log keeps a line at DEBUG. Faults keep their traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not refused(error):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.msg, record.args = "answered with an error: %s", (getattr(error, "message", error),)
        record.exc_info = record.exc_text = None
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def quiet_refusals() -> None:
    logger = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, RefusalLogFilter) for f in logger.filters):
        logger.addFilter(RefusalLogFilter())


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


class SessionDamaged(JsonRpcServerError):
    """The session's file is damaged: nothing of it is readable, or a request
    would change it. The message names the file (not its directory) and the line."""

    CODE = wire.SESSION_DAMAGED_CODE

    def __init__(self, session_id: str, error: CorruptSessionError):
        super().__init__(describe(error), code=self.CODE,
                         data={"sessionId": session_id, "file": error.path.name, "line": error.line})


def parse(model: type[M], params: Any) -> M:
    """Validate custom params; a problem becomes InvalidParams with a readable message."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(f"params must be an object, got {_json_type(params)}")
    where = invalid_text(params)
    if where is not None:  # JSON may escape one half of a UTF-16 pair; no file or model request can hold it
        raise JsonRpcInvalidParams(not_unicode(where))
    try:
        return model.model_validate(params)
    except ValidationError as error:
        raise JsonRpcInvalidParams(wire.describe_validation_error(error)) from None
