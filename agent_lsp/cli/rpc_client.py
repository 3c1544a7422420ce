"""The JSON-RPC side of the headless client, on pygls' client: messages kept
as the plain JSON they are, late replies to abandoned requests dropped, the
server's exit reported, and handlers registered as plain functions."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import subprocess
from types import SimpleNamespace
from typing import Any, Callable

from lsprotocol import converters
from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCNotification, JsonRPCProtocol, JsonRPCRequestMessage, JsonRPCResponseMessage

log = logging.getLogger(__name__)


def plain_json_converter():
    """Keep params and results of every message as the JSON dicts they are."""
    converter = converters.get_converter()

    def keep_json(obj: dict[str, Any], cls: type) -> Any:
        if obj.get("method") == "$/cancelRequest" and isinstance(obj.get("params"), dict):
            obj["params"] = SimpleNamespace(**obj["params"])  # pygls reads `.id`
        return cls(**obj)

    for message_class in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message_class, keep_json)
    return converter


class ClientProtocol(JsonRPCProtocol):
    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # A reply to a request we stopped waiting for (Ctrl-C during start-up or a
        # history load): pygls would hand it to the cancelled future and log
        # InvalidStateError with a traceback. Nobody wants it; drop it.
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            del self._request_futures[msg_id]
            return
        super()._handle_response(msg_id, result, error)


class RpcClient(JsonRPCClient):
    on_server_exit: Callable[[], None] = staticmethod(lambda: None)

    def report_server_error(self, error: Exception, source: Any) -> None:
        log.warning("protocol error from the server: %s", error)

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self.on_server_exit()


def subprocess_options() -> dict[str, Any]:
    # Its own process group: Ctrl-C at the terminal reaches us, not the
    # server, so we can cancel the turn and shut it down cleanly.
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def plain_function(handler: Callable[..., Any]) -> Callable[..., Any]:
    """pygls marks handlers with attributes, which bound methods cannot take."""
    if inspect.iscoroutinefunction(handler):
        async def handle_async(params: Any) -> Any:
            return await handler(params)

        return handle_async

    def handle(params: Any) -> Any:
        return handler(params)

    return handle


def answer_nothing(params: Any) -> None:
    return None


def ignore(params: Any) -> None:
    return None
