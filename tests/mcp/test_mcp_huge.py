"""A hostile MCP server answers a tool call with 10 MB in one message, over
stdio and over HTTP, through the real language server: the server stays up
and answers, and the model gets a cut result that says how much was cut.
(What it costs in memory: bench/mcp_huge.py.)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tools_harness import call, is_error, text_of, tool_server

from mcp_http_server import HttpMcpServer
from test_mcp_wire import run_turn

HUGE = {"command": sys.executable, "args": [str(Path(__file__).with_name("mcp_stdio_hostile.py"))]}
CHARS = 10_000_000  # over the cap; bench/mcp_huge.py sends 50 MB


async def test_a_10_mb_tool_result_is_cut_and_the_server_goes_on(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with HttpMcpServer() as http:
        servers = {"huge": HUGE, "web": {"type": "http", "url": http.url, "headers": {"Authorization": "Bearer secret-token"}}}
        async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings={"mcpServers": servers}) as editor:
            editor.permission_answer = "always"
            sid, (stdio, web) = await run_turn(editor, [
                call("mcp__huge__huge", chars=CHARS), call("mcp__web__big", chars=CHARS), {"text": "that was big"}])
            for result in (stdio, web):
                shown = text_of(result)
                assert is_error(result)  # not the whole answer
                # how much the server sent, and that it was cut
                said = re.search(r"The MCP server's answer was ([\d,]+) bytes, over the limit of 4,194,304 bytes "
                                 r"per message: it was cut\. Only the first 100,000 characters of its text are kept", shown)
                assert said and int(said.group(1).replace(",", "")) > CHARS, shown[:300]
                assert len(shown) < 60_000  # what the model gets of them
            # the server is alive and answers
            listed = await editor.request("agent/session/list", {})
            assert sid in [s["sessionId"] for s in listed["sessions"]]
