"""The cap of message_cap.py on what an HTTP MCP server answers: each
response body of JSON is one message, each line of an event stream one."""

from __future__ import annotations

from typing import Any, AsyncIterator

from agent_lsp.mcp.message_cap import LIMIT_BYTES, LineCap


def cap_responses(http: Any, limit: int = LIMIT_BYTES) -> None:
    """Make the SDK's HTTP client (an httpx2 client) read every answer through the cap."""
    import httpx2

    class CappedStream(httpx2.AsyncByteStream):
        def __init__(self, inner: Any, lines: bool):
            self.inner, self.lines = inner, lines

        async def __aiter__(self) -> AsyncIterator[bytes]:
            out: list[bytes] = []
            cap = LineCap(out.append, limit, lines=self.lines)
            async for chunk in self.inner:
                cap.feed(chunk)
                if out:
                    yield b"".join(out)
                    out.clear()
            cap.end()
            if out:
                yield b"".join(out)

        async def aclose(self) -> None:
            await self.inner.aclose()

    class CappedTransport(httpx2.AsyncBaseTransport):
        def __init__(self, inner: Any):
            self.inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            request.headers["Accept-Encoding"] = "identity"  # the cap reads the bytes as sent
            response = await self.inner.handle_async_request(request)
            kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            encoded = response.headers.get("content-encoding", "identity").lower() not in ("", "identity")
            if kind in ("application/json", "text/event-stream") and not encoded:
                response.stream = CappedStream(response.stream, lines=kind == "text/event-stream")
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

        async def __aenter__(self) -> Any:
            await self.inner.__aenter__()
            return self

        async def __aexit__(self, *exc: Any) -> None:
            await self.inner.__aexit__(*exc)

    http._transport = CappedTransport(http._transport)
