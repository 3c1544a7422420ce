"""One MCP server, connected through the official `mcp` SDK and kept running.

A `ServerConnection` owns one server for the life of the workspace host:
it connects (transport.py; stdio: through `launcher.py`, so the server dies with us; http:
Streamable HTTP with the configured headers), each message the server sends
capped (message_cap.py: the launcher relays a stdio server's output through
it, http_cap.py reads HTTP answers through it), lists the tools, follows
tool-list changes, and reconnects with exponential backoff when a running
server goes away. Its `state` is what `agent/mcp/list` reports.

An HTTP server configured without an `Authorization` header signs in with
OAuth when it answers 401 (oauth.py): the connection waits while the user
signs in in the browser (`authorizing`), and a sign-in that fails leaves it
`unauthorized` until the user asks again (`authorize()`); both are
`needs-authorization` on the wire.

The SDK's `Client` is an async context manager built on task groups, so each
connection attempt lives in one task of its own; tool calls from the agent's
tasks go through the connected client. A call cancelled by its caller makes
the SDK send `notifications/cancelled` to the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal

import anyio

from agent_lsp.mcp.config import ServerConfig
from agent_lsp.mcp.elicitation import Answer, Question
from agent_lsp.mcp.failure_text import ServerUnavailable, describe, with_stderr
from agent_lsp.mcp.flood import Coalesced
from agent_lsp.mcp.oauth import OAuthSignIn
from agent_lsp.mcp.transport import open_transport
from agent_lsp.sandbox import SandboxPolicy

log = logging.getLogger(__name__)

CLIENT_NAME = "agent-lsp"
BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)  # waits before the 1st..5th restart after a crash
MAX_RESTARTS = len(BACKOFF_S)  # then the server stays failed until the settings change
STABLE_S = 60.0  # up this long: the next crash counts from the first restart again

State = Literal["needs-trust", "starting", "authorizing", "ready", "failed", "stopped", "denied", "unauthorized"]
UNSETTLED: tuple[State, ...] = ("starting", "authorizing")  # wait_settled waits while in these
NEEDS_AUTHORIZATION: tuple[State, ...] = ("needs-trust", "denied", "authorizing", "unauthorized")


class ServerConnection:
    def __init__(
        self,
        config: ServerConfig,
        *,
        root: Path,
        connect_timeout_s: float = 30.0,
        on_change: Callable[["ServerConnection"], None] | None = None,
        on_question: Callable[[Question], Awaitable[Answer]] | None = None,
        client_version: str = "0",
        token_dir: Path | None = None,
        open_url: Callable[[str, str], Awaitable[None]] | None = None,
        sandbox: SandboxPolicy | None = None,
    ):
        self.config = config
        self.sandbox = sandbox  # where a stdio server runs (mcp/sandboxed.py)
        self.name = config.name
        self.root = root
        self.connect_timeout_s = connect_timeout_s
        self.on_change = on_change  # called whenever state or tools change
        self.on_question = on_question  # asks the user what the server elicits
        self.calling_sessions: list[str] = []  # the sessions with a tool call on this server now
        self.client_version = client_version
        self.state: State = "needs-trust" if config.is_project else "stopped"
        self.reason: str | None = None
        self.tools: list[Any] = []  # mcp_types.Tool of the current listing
        self.protocol_version: str | None = None
        self.server_name: str | None = None
        self.restarts = 0
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._closed = asyncio.Event()  # the current attempt's transport ended
        self._settled = asyncio.Event()  # left "starting" (ready or failed)
        self._was_ready = False  # the current attempt got as far as listing the tools
        self._http_refusal: str | None = None  # "HTTP 401 Unauthorized" of the last refused request
        self._refreshes = Coalesced(self._refresh)  # tool-list changes, one listing at a time
        self.sign_in = self._oauth(token_dir, open_url)

    # ------------------------------------------------------------- lifecycle

    def _oauth(self, token_dir: Path | None, open_url: Callable[[str, str], Awaitable[None]] | None) -> OAuthSignIn | None:
        """OAuth for an HTTP server that has no credentials configured."""
        config = self.config
        if token_dir is None or config.transport != "http" or not config.url:
            return None
        if any(name.lower() == "authorization" for name in config.headers):
            return None
        return OAuthSignIn(self.name, config.url, token_dir, open_url=open_url or _print_url,
                           on_waiting=self._waiting_for_user)

    def _waiting_for_user(self, waiting: bool) -> None:
        if waiting:
            self._set("authorizing", "waiting for the sign-in in the browser")
        elif self.state == "authorizing":
            self._set("starting")

    def start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        self._stopping = False
        self._set("starting")
        self._task = asyncio.ensure_future(self._supervise())

    async def stop(self) -> None:
        self._stopping = True
        self._closed.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._client = None
        self._set("stopped")

    def mark(self, state: State, reason: str | None = None) -> None:
        """A state decided outside the connection (trust asked, trust denied)."""
        self._set(state, reason)

    async def authorize(self) -> None:
        """Sign in again (OAuth: new tokens through the browser); start a stopped or refused server."""
        if self.sign_in is None:
            raise ValueError(f"MCP server '{self.name}' does not sign in with OAuth")
        await self.stop()
        self.sign_in.store.forget_tokens()
        self.start()

    async def sign_out(self) -> bool:
        """Forget the server's tokens and registration and stop it; whether there were any."""
        if self.sign_in is None:
            raise ValueError(f"MCP server '{self.name}' does not sign in with OAuth")
        await self.stop()
        forgotten = self.sign_in.store.forget()
        self._set("unauthorized", "signed out; authorize it to use it again")
        return forgotten

    async def wait_settled(self, timeout: float) -> None:
        """Until the server is ready or failed (or `timeout` passed)."""
        if self.state not in UNSETTLED:
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout)

    def _set(self, state: State, reason: str | None = None) -> None:
        self.state, self.reason = state, reason
        if state in UNSETTLED:
            self._settled.clear()
        else:
            self._settled.set()
        if self.on_change is not None:
            self.on_change(self)

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        failures = 0
        while not self._stopping:
            started = loop.time()
            self._http_refusal = None
            reason = await self._attempt()
            if self._stopping:
                return
            refused = self._http_refusal is not None and self._http_refusal.split()[1] in ("401", "403")
            if refused and self.sign_in is not None:
                # a sign-in that failed: opening the browser again unasked would not help
                self._set("unauthorized", f"{reason}; authorize it to sign in again")
                return
            if refused:
                # configured credentials: retrying with the same ones cannot help
                self._set("failed", f"{self._http_refusal}: the server wants authorization; "
                                    "give it a token in \"headers\" or \"bearerTokenEnvVar\"")
                return
            if loop.time() - started > STABLE_S:
                failures = 0
            if failures >= MAX_RESTARTS:
                self._set("failed", f"{reason}; gave up after {MAX_RESTARTS} restarts")
                return
            delay = BACKOFF_S[failures]
            if self._was_ready:  # a crash: calls wait for the restart
                self._set("starting", f"restarting in {delay:g} s: {reason}")
            else:  # never came up: calls fail at once while it retries
                self._set("failed", f"{reason}; retrying in {delay:g} s")
            await asyncio.sleep(delay)
            failures += 1
            self.restarts += 1
            self._set("starting")

    async def _attempt(self) -> str:
        """Connect and serve until the transport ends; the reason it ended."""
        self._closed = asyncio.Event()
        self._was_ready = False
        ready = asyncio.Event()
        errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        session = asyncio.ensure_future(self._session(ready, errlog))
        waiter = asyncio.ensure_future(ready.wait())
        try:
            while True:
                done, _ = await asyncio.wait({session, waiter}, timeout=self.connect_timeout_s,
                                             return_when=asyncio.FIRST_COMPLETED)
                if done or self.state != "authorizing":
                    break  # (the sign-in has a timeout of its own)
            if not done:
                session.cancel()
                with contextlib.suppress(BaseException):
                    await session
                return with_stderr(f"did not answer within {self.connect_timeout_s:g} s", errlog)
            if ready.is_set():
                self._was_ready = True
                self._http_refusal = None  # signed in: a later crash is a crash
                self._set("ready")
            try:
                await session
            except Exception as error:
                reason = describe(error)
                if self._http_refusal and self._http_refusal not in reason:
                    reason = f"{reason} ({self._http_refusal})"
                return with_stderr(reason, errlog)
            return with_stderr("the server closed the connection", errlog)
        finally:
            waiter.cancel()
            if not session.done():
                session.cancel()
                with contextlib.suppress(BaseException):
                    await session
            self._client = None
            errlog.close()

    async def _session(self, ready: asyncio.Event, errlog: Any) -> None:
        from mcp import Client  # the SDK is imported when a server is first started
        import mcp_types as types

        async with AsyncExitStack() as stack:
            client = Client(
                await open_transport(self.config, self.root, stack, errlog, self._closed, self.sign_in,
                                     self._note_refusal, self.sandbox),
                client_info=types.Implementation(name=CLIENT_NAME, version=self.client_version),
                list_roots_callback=self._roots,
                elicitation_callback=self._elicit,
                message_handler=self._on_message,
                cache=None,
            )
            await stack.enter_async_context(client)
            self.protocol_version = client.protocol_version
            self.server_name = client.server_info.name if client.server_info else None
            self.tools = await self._list_tools(client)
            self._client = client
            ready.set()
            async with anyio.create_task_group() as group:
                group.start_soon(self._follow_tool_changes, client)
                await self._closed.wait()
                group.cancel_scope.cancel()
            if not self._stopping:
                raise ServerUnavailable("the server closed the connection")

    async def _note_refusal(self, response: Any) -> None:
        # a 401 stays the reason though the sign-in's discovery meets 404s after it
        refusal = response.status_code in (401, 403)
        if response.status_code >= 400 and (refusal or self._http_refusal is None):
            self._http_refusal = f"HTTP {response.status_code} {response.reason_phrase}".strip()

    async def _list_tools(self, client: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        for _ in range(50):  # a paginator that never ends cannot hang the start
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _on_message(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification):
            self._refreshes.request()  # one at a time, however many are announced (flood.py)
        elif isinstance(message, Exception):
            log.debug("MCP server %s sent something unreadable: %s", self.name, message)

    async def _follow_tool_changes(self, client: Any) -> None:
        """2026-07-28 servers announce changes on a `subscriptions/listen` stream."""
        from mcp.client.subscriptions import ListenNotSupportedError

        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _ in events:
                    await self._refresh()
        except ListenNotSupportedError:
            return  # 2025 revisions: notifications/tools/list_changed arrives through _on_message
        except Exception as error:
            log.debug("MCP server %s: tool-change stream ended: %s", self.name, error)

    async def _refresh(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            self.tools = await self._list_tools(client)
        except Exception as error:
            log.warning("MCP server %s: listing its tools failed: %s", self.name, describe(error))
            return
        if self.on_change is not None:
            self.on_change(self)

    async def _roots(self, context: Any) -> Any:
        import mcp_types as types

        return types.ListRootsResult(roots=[types.Root(uri=self.root.as_uri(), name=self.root.name)])

    async def _elicit(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        if self.on_question is None or getattr(params, "mode", "form") != "form":
            log.info("MCP server %s asked the user something that cannot be shown here; declined", self.name)
            return types.ElicitResult(action="decline")
        sessions = set(self.calling_sessions)
        question = Question(self.name, params.message, dict(params.requested_schema),
                            session_id=sessions.pop() if len(sessions) == 1 else None)
        answer = await self.on_question(question)
        return types.ElicitResult(action=answer.action, content=answer.content if answer.action == "accept" else None)

    # ----------------------------------------------------------------- calls

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout_s: float,
        on_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
    ) -> Any:
        """The server's `CallToolResult`. Raises ServerUnavailable, TimeoutError or the SDK's MCPError.
        A call to a server that is (re)starting waits for it, up to the connect timeout."""
        client = await self._ready_client()
        return await asyncio.wait_for(
            client.call_tool(name, arguments, read_timeout_seconds=timeout_s, progress_callback=on_progress), timeout_s
        )

    async def _ready_client(self) -> Any:
        """The connected client; a server that is (re)starting is waited for, up to the connect timeout."""
        await self.wait_settled(self.connect_timeout_s)
        client = self._client
        if client is None or self.state != "ready":
            raise ServerUnavailable(self.unavailable_reason())
        return client

    @property
    def has_prompts(self) -> bool:
        client = self._client
        return client is not None and self.state == "ready" and client.server_capabilities.prompts is not None

    async def list_prompts(self, *, timeout_s: float) -> list[Any]:
        """The server's prompts (mcp_types.Prompt), every page."""
        client = await self._ready_client()
        prompts: list[Any] = []
        cursor = None
        for _ in range(50):
            page = await asyncio.wait_for(client.list_prompts(cursor=cursor), timeout_s)
            prompts.extend(page.prompts)
            cursor = page.next_cursor
            if not cursor:
                break
        return prompts

    async def get_prompt(self, name: str, arguments: dict[str, str], *, timeout_s: float) -> Any:
        """The server's `GetPromptResult`: the prompt's messages with `arguments` filled in."""
        client = await self._ready_client()
        return await asyncio.wait_for(client.get_prompt(name, arguments), timeout_s)

    @property
    def has_resources(self) -> bool:
        client = self._client
        return client is not None and self.state == "ready" and client.server_capabilities.resources is not None

    async def list_resources(self, *, timeout_s: float) -> list[Any]:
        """The server's resources (mcp_types.Resource), every page."""
        client = await self._ready_client()
        resources: list[Any] = []
        cursor = None
        for _ in range(50):
            page = await asyncio.wait_for(client.list_resources(cursor=cursor), timeout_s)
            resources.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                break
        return resources

    async def read_resource(self, uri: str, *, timeout_s: float) -> Any:
        """The server's `ReadResourceResult` for `uri`."""
        client = await self._ready_client()
        return await asyncio.wait_for(client.read_resource(uri), timeout_s)

    def unavailable_reason(self) -> str:
        if self.state == "starting":
            return f"MCP server '{self.name}' is still starting"
        if self.state in ("needs-trust", "denied"):
            return f"MCP server '{self.name}' from .mcp.json is not trusted in this workspace"
        if self.state in ("authorizing", "unauthorized"):
            return f"MCP server '{self.name}' needs authorization: {self.reason}"
        if self.state == "failed":
            return f"MCP server '{self.name}' failed: {self.reason}"
        return f"MCP server '{self.name}' is not running"

    def status(self) -> dict[str, Any]:
        """The wire shape of `agent/mcp/list` for this server (see docs/protocol.md)."""
        data: dict[str, Any] = {
            "name": self.name,
            "transport": self.config.transport,
            "source": self.config.source,
            "state": "needs-authorization" if self.state in NEEDS_AUTHORIZATION else self.state,
            "toolCount": len(self.tools) if self.state == "ready" else 0,
            "tools": [tool.name for tool in self.tools] if self.state == "ready" else [],
            "restarts": self.restarts,
        }
        if self.reason:
            data["reason"] = self.reason
        if self.protocol_version:
            data["protocolVersion"] = self.protocol_version
        if self.sign_in is not None:
            data["authorization"] = "oauth"
            data["signedIn"] = self.sign_in.signed_in
        elif self.config.is_project:
            data["authorization"] = "trust"
        return data



async def _print_url(url: str, why: str) -> None:
    """No editor that opens pages (tests, scripts): the log says where to sign in."""
    log.warning("%s: open %s", why, url)
