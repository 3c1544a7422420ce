"""OAuth for Streamable HTTP MCP servers, through the SDK's `OAuthClientProvider`.

The SDK does the protocol: on a 401 it discovers the protected-resource and
authorization-server metadata, registers a client dynamically, builds the
authorization URL with PKCE, exchanges the code, refreshes expired tokens
and retries the request. What it asks of us, `OAuthSignIn` gives it:

- storage: a `TokenFile` (token_store.py), outside sessions and logs;
- a redirect URI: `http://127.0.0.1:<port>/callback`, the loopback of a
  native app (RFC 8252). The authorization server compares it exactly with
  the registered one, so the port is chosen once, with the registration, and
  kept in the token file; a port taken by then means registering again;
- a redirect handler: the URL goes to the user's browser through the editor
  (`open_url`: `window/showDocument {external: true}`, or a message with
  the URL where that is not possible);
- a callback handler: `LoopbackCallback` waits (at most `timeout_s`) for the
  browser's redirect to that port and returns its `code` and `state` (the
  SDK checks the state).

The loopback listener answers one kind of request, `GET /callback?…`, on
127.0.0.1 only; it is asyncio's `start_server` with a request line parsed by
hand (a dozen lines) because the stdlib's `http.server` would need a thread
and nothing in our dependencies serves one request without taking over the
process's signals.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

from agent_lsp.mcp.token_store import TokenFile

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
SIGN_IN_TIMEOUT_S = 300.0  # how long the browser's redirect is waited for
CLIENT_NAME = "agent-lsp"
_PAGE = ("<!doctype html><meta charset=utf-8><title>agent-lsp</title>"
         "<p>{}</p><p>You can close this tab and return to your editor.</p>")


class SignInFailed(Exception):
    """The user did not complete the sign-in (refused, timed out, the port was taken)."""


class OAuthSignIn:
    """The OAuth side of one HTTP server's connection: a provider per connection attempt."""

    def __init__(
        self,
        server: str,
        url: str,
        token_dir: Path,
        *,
        open_url: Callable[[str, str], Awaitable[None]],
        on_waiting: Callable[[bool], None],
        timeout_s: float = SIGN_IN_TIMEOUT_S,
    ):
        self.server = server
        self.url = url
        self.store = TokenFile(token_dir, url)
        self.open_url = open_url  # (url, why) -> shown to the user
        self.on_waiting = on_waiting  # True while the browser's redirect is awaited
        self.timeout_s = timeout_s
        self._callback: LoopbackCallback | None = None
        self._redirect_uri = ""  # of the current provider

    @property
    def signed_in(self) -> bool:
        return self.store.has_tokens

    async def provider(self) -> Any:
        """A fresh `OAuthClientProvider` (an httpx2 Auth) for the next connection attempt."""
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import OAuthClientMetadata

        self._redirect_uri = self.store.redirect_uri() or f"http://127.0.0.1:{_free_port()}{CALLBACK_PATH}"
        metadata = OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[self._redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        )
        provider = OAuthClientProvider(self.url, metadata, self.store,
                                       redirect_handler=self._redirect, callback_handler=self._wait_for_code)
        tokens = await self.store.get_tokens()
        if tokens is not None:
            # The SDK learns a token's expiry only when it receives the token; a stored
            # one would be sent until refused. Told here, it refreshes an expired one first.
            provider.context.update_token_expiry(tokens)
        return provider

    async def _redirect(self, authorization_url: str) -> None:
        port = urlsplit(self._redirect_uri).port or 0
        try:
            self._callback = await LoopbackCallback.listen(port)
        except OSError as error:
            self.store.forget_client()  # the next attempt registers with a new port
            raise SignInFailed(f"the sign-in's loopback port {port} is taken ({error}); authorize again") from None
        self.on_waiting(True)
        try:
            await self.open_url(authorization_url, f"the MCP server '{self.server}' asks you to sign in")
        except Exception:
            await self._close_callback()
            raise

    async def _wait_for_code(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        callback = self._callback
        if callback is None:
            raise SignInFailed("no sign-in was started")
        try:
            query = await asyncio.wait_for(callback.received, self.timeout_s)
        except asyncio.TimeoutError:
            raise SignInFailed(f"the sign-in was not completed within {self.timeout_s:g} s") from None
        finally:
            await self._close_callback()
        if "error" in query:
            described = query.get("error_description") or ""
            raise SignInFailed(f"the authorization server answered {query['error']}" + (f": {described}" if described else ""))
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"), iss=query.get("iss"))

    async def _close_callback(self) -> None:
        callback, self._callback = self._callback, None
        self.on_waiting(False)
        if callback is not None:
            await callback.close()


class LoopbackCallback:
    """Listens on 127.0.0.1:port for the browser's redirect; `received` is its query."""

    def __init__(self) -> None:
        self.received: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self._server: asyncio.AbstractServer | None = None

    @classmethod
    async def listen(cls, port: int) -> "LoopbackCallback":
        callback = cls()
        callback._server = await asyncio.start_server(callback._serve, "127.0.0.1", port)
        return callback

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        if not self.received.done():
            self.received.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass  # the headers say nothing we need
            method, target, *_ = request_line.split(" ") + ["", ""]
            parts = urlsplit(target)
            if method != "GET" or parts.path != CALLBACK_PATH:
                self._answer(writer, 404, "Not the sign-in callback.")
                return
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            if "error" in query:
                self._answer(writer, 200, "The sign-in was refused.")
            else:
                self._answer(writer, 200, "Signed in.")
            if not self.received.done():
                self.received.set_result(query)
        except (asyncio.TimeoutError, OSError, UnicodeError, ValueError) as error:
            log.debug("sign-in callback: a bad request: %s", error)
        finally:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()

    @staticmethod
    def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
        body = _PAGE.format(text).encode()
        reason = "OK" if status == 200 else "Not Found"
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)


def _free_port() -> int:
    """A port free now on 127.0.0.1, for a new registration's redirect URI."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
