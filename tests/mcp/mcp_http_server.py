"""A Streamable HTTP MCP server built with the official SDK, run in a thread for a test.

Tools: `echo` (text back), `count` (reports progress n times), `hang` (waits until
cancelled; records the cancel), `picture` (an image and a resource link), `big`
(a long text), `grow` (adds the tool `late` and announces the list change);
`ask_name` and `confirm` (ask the user through elicitation); two resources,
`docs://readme` and `docs://big` (2 010 characters); one prompt, `review(path, focus?)`.
Every request must carry `Authorization: Bearer <token>` (401 otherwise);
`legacy=True` makes it answer `server/discover` like a server of the
2025-11-25 revision (method not found), so clients fall back to `initialize`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import uvicorn
from pydantic import BaseModel
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage
import mcp_types as types

PNG_1PX = base64.b64encode(
    bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000" "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
).decode()


class NameAnswer(BaseModel):
    name: str


class Confirmation(BaseModel):
    sure: bool


# Resolvers ask the way both revisions carry a question: inside an input-required
# result on 2026-07-28, as a standalone elicitation/create request on 2025-11-25.
def name_question() -> Elicit[NameAnswer]:
    return Elicit("Whose name goes on the report?", NameAnswer)


def delete_question() -> Elicit[Confirmation]:
    return Elicit("Delete the old reports?", Confirmation)


@dataclass
class Seen:
    authorizations: list[str | None] = field(default_factory=list)
    hang_started: threading.Event = field(default_factory=threading.Event)
    hang_cancelled: threading.Event = field(default_factory=threading.Event)


def build(seen: Seen) -> MCPServer:
    server = MCPServer("test-http")

    @server.tool(description="Say the text back")
    def echo(text: str) -> str:
        return f"echo: {text}"

    @server.tool(description="Count to n, reporting progress")
    async def count(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}")
            await anyio.sleep(0.05)
        return f"counted to {n}"

    @server.tool(description="Wait until cancelled")
    async def hang() -> str:
        seen.hang_started.set()
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            seen.hang_cancelled.set()
            raise
        return "woke up"

    @server.tool(description="A picture and a link")
    def picture() -> list[Any]:
        return [
            types.ImageContent(type="image", data=PNG_1PX, mime_type="image/png"),
            types.ResourceLink(type="resource_link", uri="file:///docs/readme.md", name="readme", mime_type="text/markdown"),
        ]

    @server.tool(description="A long text")
    def big(chars: int) -> str:
        return "x" * chars

    @server.tool(description="Add the tool 'late'")
    async def grow(ctx: Context) -> str:
        server.add_tool(lambda: "late and here", name="late", description="Added while running")
        await ctx.notify_tools_changed()
        return "grown"

    @server.resource("docs://readme", name="readme", description="How to use the test server", mime_type="text/markdown")
    def readme() -> str:
        return "# Test server\nCall echo."

    @server.resource("docs://big", name="big", description="A long document", mime_type="text/plain")
    def big_document() -> str:
        return "begin " + "y" * 2_000 + " end"

    @server.prompt(description="Review one file")
    def review(path: str, focus: str = "everything") -> list[Any]:
        return [
            UserMessage(f"Review {path}, looking at {focus}."),
            AssistantMessage("I will read the file first."),
        ]

    @server.tool(description="Ask the user for a name")
    async def ask_name(answer: Annotated[ElicitationResult[NameAnswer], Resolve(name_question)]) -> str:
        if isinstance(answer, AcceptedElicitation):
            return f"the name is {answer.data.name}"
        return f"the user answered {answer.action}"

    @server.tool(description="Ask the user to confirm")
    async def confirm(answer: Annotated[ElicitationResult[Confirmation], Resolve(delete_question)]) -> str:
        if isinstance(answer, AcceptedElicitation):
            return f"confirmed: {answer.data.sure}"
        return f"the user answered {answer.action}"

    return server


class _Gate:
    """Checks the bearer token; answers discover as a 2025-11-25 server would, when legacy."""

    def __init__(self, app: Any, seen: Seen, token: str, legacy: bool):
        self.app, self.seen, self.token, self.legacy = app, seen, token, legacy

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        authorization = headers.get(b"authorization", b"").decode() or None
        self.seen.authorizations.append(authorization)
        if authorization != f"Bearer {self.token}":
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        if not self.legacy or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if isinstance(request, dict) and request.get("method") == "server/discover":
            answer = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": -32601, "message": "Method not found"}})
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": answer.encode()})
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class ServedInThread:
    """An ASGI app served by uvicorn on 127.0.0.1 in a thread of the test process:
    `start`/`stop` for tests without an event loop of their own (the Neovim
    tests), `async with` for the others."""

    def __init__(self, app: Any, port: int = 0):
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    def start(self):
        self._thread.start()
        while not self._server.started:
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    async def __aenter__(self):
        self._thread.start()
        while not self._server.started:
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._server.should_exit = True
        await asyncio.to_thread(self._thread.join, 10)


class HttpMcpServer(ServedInThread):
    def __init__(self, token: str = "secret-token", legacy: bool = False):
        self.seen = Seen()
        self.token = token
        self.mcp = build(self.seen)
        super().__init__(_Gate(self.mcp.streamable_http_app(), self.seen, token, legacy))
