"""MCP prompts as commands, through the real language server: the HTTP test
server's `review` prompt is listed with its arguments and run as the user's
followup; a missing argument or an unknown prompt is a readable -32602."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from mcp_http_server import HttpMcpServer
from tools_harness import tool_server

TURN_S = 40.0


async def first_request(editor, method: str, params: dict) -> dict:
    """The folder's first MCP request starts its servers and waits for them: longer than the harness's timeout."""
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), TURN_S)


def http_settings(url: str) -> dict:
    return {"mcpServers": {"web": {"type": "http", "url": url, "headers": {"Authorization": "Bearer secret-token"}}}}


async def test_prompts_are_listed_and_one_runs_as_the_user_s_followup(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with HttpMcpServer() as http, tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                                     settings=http_settings(http.url)) as editor:
        listed = (await first_request(editor, "agent/mcp/prompts", {"workspaceUri": workspace.as_uri()}))["prompts"]
        (review,) = [p for p in listed if p["name"] == "review"]
        assert review["server"] == "web" and review["description"] == "Review one file"
        assert review["workspaceUri"] == workspace.as_uri()
        assert [(a["name"], a["required"]) for a in review["arguments"]] == [("path", True), ("focus", False)]

        ref = await editor.request("agent/mcp/prompt/run", {"server": "web", "name": "review", "arguments": {"path": "src/a.py"}})
        sid = ref["sessionId"]
        await editor.wait_for(lambda: editor.event_types(sid)[-1:] == ["turn/end"], timeout=TURN_S, what="the turn to end")
        (user,) = [e["data"] for e in editor.events[sid] if e["type"] == "user/message"]
        text = "".join(b.get("text", "") for b in user["message"]["content"])
        assert "Review src/a.py, looking at everything." in text
        assert "(assistant) I will read the file first." in text
        assert "Review src/a.py" in editor.streamed_text(sid)  # the model got it as the user's words


async def test_a_prompt_that_cannot_run_is_a_readable_invalid_params_error(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with HttpMcpServer() as http, tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                                     settings=http_settings(http.url)) as editor:
        await first_request(editor, "agent/mcp/prompts", {})
        for params, said in [
            ({"server": "web", "name": "review"}, "needs path"),
            ({"server": "web", "name": "review", "arguments": {"path": ""}}, "needs path"),
            ({"server": "web", "name": "summarise"}, "has no prompt 'summarise'"),
            ({"server": "nope", "name": "review"}, "no ready MCP server named 'nope'"),
        ]:
            with pytest.raises(JsonRpcException) as caught:
                await editor.request("agent/mcp/prompt/run", params)
            assert caught.value.code == -32602
            assert said in caught.value.message and "Traceback" not in caught.value.message
        assert not [e for e in editor.notifications if e[0] == "session/event"]  # no session got a message
