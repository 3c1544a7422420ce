"""The ACP face's transport: newline-delimited JSON-RPC over stdio, each line
checked before the ACP library sees it.

The library's own stdio transport hands any valid JSON to its receive loop,
which ends the process on a line that is not an object (`42`, `[...]`,
`null`), and drops a line that is not JSON without an answer. Here, as on the
LSP face (`agent_lsp/jsonrpc.py` holds the shared wording):

- not JSON, or nested too deeply to parse: -32700 with `id: null`;
- not a JSON-RPC 2.0 message (not an object, an id that is not an integer or
  a string, a wrong `jsonrpc`, a `method` that is not a string): -32600, with
  the message's id when it can be echoed, else `id: null`; a broken
  notification has nobody to answer and is dropped with a log line;
- text JSON escaped as one half of a UTF-16 pair (an unpaired surrogate) in
  the params: -32602 naming where (`prompt.0.text: not valid Unicode ...`);
  in the result of the client's answer to us: that answer becomes an error;
- a line over `MAX_LINE_BYTES`: skipped without being held, -32600 `id: null`;
- an error the library made of an unexpected exception (its data holds the
  exception's text, which may name server files): the fixed internal-error
  message, the traceback stays in the log; an error message over
  `MAX_ERROR_MESSAGE` characters (it may quote a huge param) is cut short.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from agent_lsp.jsonrpc import (
    INTERNAL_ERROR,
    INTERNAL_ERROR_MESSAGE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_ERROR_MESSAGE,
    PARSE_ERROR,
    answer_id,
    brief,
    envelope_problem,
    invalid_text,
    loads,
    not_unicode,
    parse_problem,
)

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 2**20  # a line longer than this is skipped, not read (as the LSP face's frames)
READ_LIMIT = 2**20  # what the stream reader buffers before a line is handed over in parts

_LIBRARY_INTERNAL_ERROR = "Internal error"  # the library's message for an exception it caught


class Oversized:
    """A line too long to read: it was skipped."""

    def __init__(self, length: int):
        self.length = length


class StdioTransport:
    """The ACP library's message transport (`send`, `receive`, `close`) over a
    stream pair, answering what is not a JSON-RPC message itself."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, limit: int = MAX_LINE_BYTES):
        self._reader = reader
        self._writer = writer
        self._limit = limit
        self._lock = asyncio.Lock()  # one message written at a time, in order
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        error = message.get("error")
        if isinstance(error, dict):
            if error.get("code") == INTERNAL_ERROR and error.get("message") == _LIBRARY_INTERNAL_ERROR:
                message = {**message, "error": {"code": INTERNAL_ERROR, "message": INTERNAL_ERROR_MESSAGE}}
            elif error.get("code") == INVALID_PARAMS and isinstance(error.get("data"), dict) and "errors" in error["data"]:
                # the library's validation error echoes the params back: say what is wrong instead, as the LSP face does
                message = {**message, "error": {"code": INVALID_PARAMS, "message": _validation_text(error["data"])}}
            elif isinstance(error.get("message"), str) and len(error["message"]) > MAX_ERROR_MESSAGE:
                message = {**message, "error": {**error, "message": brief(error["message"], MAX_ERROR_MESSAGE)}}
        data = (_dumps(message) + "\n").encode("utf-8")
        async with self._lock:
            if self._closed:
                raise ConnectionError("the connection is closed")
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON-RPC message, None at the end of input."""
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if isinstance(line, Oversized):
                await self._refuse(None, INVALID_REQUEST,
                                   f"invalid request: a message of {line.length} bytes is over the limit of {self._limit}; skipped")
                continue
            if not line.strip():
                continue
            try:
                data = loads(line)  # strict: NaN and Infinity are refused, as on the LSP face
            except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
                await self._refuse(None, PARSE_ERROR, parse_problem(error))
                continue
            problem = envelope_problem(data)
            if problem is not None:
                if isinstance(data, dict) and "id" not in data:
                    log.warning("dropped a message: %s", problem)
                else:
                    await self._refuse(answer_id(data), INVALID_REQUEST, f"invalid request: {problem}")
                continue
            if "method" not in data:
                return _checked_answer(data)
            where = invalid_text(data.get("params"))
            if where is None:
                return data
            if "id" in data:
                await self._refuse(data["id"], INVALID_PARAMS, not_unicode(where))
            else:
                log.warning("dropped %s: %s", brief(data["method"]), not_unicode(where))

    async def close(self) -> None:
        async with self._lock:
            self._closed = True

    async def _refuse(self, msg_id: Any, code: int, message: str) -> None:
        try:
            await self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
        except (ConnectionError, OSError) as error:  # the client is gone: the next read ends
            log.debug("could not answer a bad message: %s", error)

    async def _read_line(self) -> bytes | Oversized | None:
        """The next line (None at the end of input); one over the limit is
        read through in parts and dropped."""
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                part = await self._reader.readuntil(b"\n")
                ended = True
            except asyncio.LimitOverrunError as error:
                part = await self._reader.readexactly(error.consumed)
                ended = False
            except asyncio.IncompleteReadError as error:  # the end of input
                part = error.partial
                ended = True
                if not part and size == 0:
                    return None
            size += len(part)
            if size <= self._limit:
                parts.append(part)
            else:
                parts.clear()
            if ended:
                return b"".join(parts) if size <= self._limit else Oversized(size)


def _checked_answer(data: dict[str, Any]) -> dict[str, Any]:
    """The client's answer to a request of ours, or, when its result holds text
    no file or session can keep, an error answer to that request instead."""
    where = invalid_text(data.get("result"))
    if where is None:
        return data
    return {"jsonrpc": "2.0", "id": data.get("id"),
            "error": {"code": INVALID_PARAMS, "message": f"the client's answer: {not_unicode(where)}"}}


def _validation_text(data: dict[str, Any]) -> str:
    """"sessionId: Field required; prompt.0.text: ..." from pydantic's errors, without the input."""
    parts = []
    for item in data.get("errors") or ():
        if isinstance(item, dict):
            where = ".".join(str(p) for p in item.get("loc") or ()) or "params"
            parts.append(f"{where}: {item.get('msg', 'invalid')}")
    return brief("invalid params: " + ("; ".join(parts) or "not what the method takes"), MAX_ERROR_MESSAGE)


def _dumps(message: dict[str, Any]) -> str:
    """The message as one line; an answer whose result or error data cannot be
    written (too deeply nested) still goes out, as the bare error."""
    try:
        return json.dumps(message, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        if "id" not in message or "method" in message:
            raise
        log.warning("an answer could not be written as JSON: sent as an internal error", exc_info=True)
        error = message.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
            bare = {"code": error["code"], "message": error["message"]}
        else:
            bare = {"code": INTERNAL_ERROR, "message": INTERNAL_ERROR_MESSAGE}
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": bare}, separators=(",", ":"))
