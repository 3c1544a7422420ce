"""`initialize` answered at once, before pygls has loaded.

Importing pygls' type library (lsprotocol) takes most of a second, and editors
such as Emacs wait for the `initialize` result before they go on. The result
depends only on the features the server registers and on the client
capabilities pygls reads, which `agent_lsp.lsp.capabilities` describes without
pygls. So the early phase answers a plain `initialize` from that description
while pygls loads; pygls then handles the same `initialize` itself, its answer
is dropped (and compared: a difference is logged), and from then on messages
flow straight between pygls and the transport. `initialize` params not in the
plain form are answered by pygls once it has loaded, as every later message is.

This module must not import pygls or lsprotocol.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agent_lsp.lsp.capabilities import initialize_result

log = logging.getLogger(__name__)


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class EarlyInitialize:
    """An `initialize` request seen before pygls has loaded, answered at once if
    its params are plain."""

    def __init__(self, request_id: Any, answered: dict[str, Any] | None):
        self.request_id = request_id
        self.answered = answered  # the result sent early; None: pygls answers

    @classmethod
    def answer(cls, message: dict[str, Any], writer: Any) -> EarlyInitialize:
        """An `initialize` request (parsed): answered now if its params are plain."""
        result = initialize_result(message.get("params"))
        if result is not None:
            writer.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        return cls(message["id"], result)


class InitializeFilter:
    """pygls' writer until pygls has answered the early `initialize`: drops that
    answer if the early phase gave it already (saying so in the log if the two
    differ). Then it puts the real writer back, and leaves the I/O path."""

    def __init__(self, writer: Any, protocol: Any, early: EarlyInitialize):
        self._writer = writer
        self._protocol = protocol
        self._early = early

    def write(self, data: bytes) -> None:
        _, _, body = data.partition(b"\r\n\r\n")
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        early = self._early
        if not (isinstance(message, dict) and message.get("id") == early.request_id and "method" not in message):
            self._writer.write(data)
            return
        self._protocol.set_writer(self._writer)
        if early.answered is None:
            self._writer.write(data)
        elif message.get("result") != early.answered:
            # The client has the early answer; the description has fallen behind the
            # features registered, or pygls rejected a deep capability.
            log.warning("the early initialize answer differs from pygls' answer: sent %s, pygls %s",
                        json.dumps(early.answered, sort_keys=True),
                        json.dumps(message.get("result", message.get("error")), sort_keys=True))

    def close(self) -> None:
        self._writer.close()
