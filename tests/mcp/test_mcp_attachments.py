"""`@server:uri` in a followup, through the real language server: the HTTP
test server's resource is read and reaches the model with the message; an
unknown server or resource leaves a visible note and the message still goes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp_http_server import HttpMcpServer
from tools_harness import tool_server

TURN_S = 40.0


async def followup_turn(editor, text: str) -> tuple[str, dict]:
    """The session and its user/message after one turn with the echoing model."""
    # the answer waits for the reads, and here for the server's first connection too
    answer = editor.client.protocol.send_request_async("agent/followup", {"content": text})
    sid = (await asyncio.wait_for(answer, TURN_S))["sessionId"]
    await editor.wait_for(lambda: editor.event_types(sid)[-1:] == ["turn/end"], timeout=TURN_S, what="the turn to end")
    (user,) = [e["data"]["message"] for e in editor.events[sid] if e["type"] == "user/message"]
    return sid, user


async def test_a_mentioned_resource_is_attached_and_reaches_the_model(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with HttpMcpServer() as http:
        settings = {"mcpServers": {"web": {"type": "http", "url": http.url, "headers": {"Authorization": "Bearer secret-token"}}},
                    "mcp": {"maxOutputChars": 1_000}}
        async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings=settings) as editor:
            sid, user = await followup_turn(editor, "Summarise @web:docs://readme. Also (@web:docs://big), @web:docs://missing, @nobody:x://y")
            readme, big, missing, nobody = user["context"]
            assert readme == {"kind": "mcp-resource", "server": "web", "uri": "docs://readme", "text": "# Test server\nCall echo."}
            assert big["uri"] == "docs://big" and big["text"].startswith("begin yyy") and " end" not in big["text"]
            assert "characters of output not shown" in big["text"] and "cut at 1000" in big["note"]
            assert missing["uri"] == "docs://missing" and "text" not in missing and "not attached" in missing["note"]
            assert "no MCP server named 'nobody'" in nobody["note"] and "web" in nobody["note"]
            heard = editor.streamed_text(sid)  # the scripted model says back what the request carried
            assert "Summarise @web:docs://readme." in heard and "Call echo." in heard and "no MCP server named 'nobody'" in heard


async def test_text_without_a_mention_is_sent_as_it_is(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions") as editor:
        _, user = await followup_turn(editor, "mail me@example.com:about or see @docs")
        assert "context" not in user
