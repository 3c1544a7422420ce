"""A hostile MCP server floods the language server during a tool call: 2,000
tool-list changes, 2,000 progress reports and 2,000 log messages before its
answer. The tools are listed again a few times, not 2,000; the client is sent
a few progress notifications, not 2,000; the call's answer reaches the model
and the server goes on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tools_harness import call, text_of, tool_server

from test_mcp_wire import run_turn

HOSTILE = {"command": sys.executable, "args": [str(Path(__file__).with_name("mcp_stdio_hostile.py"))]}
COUNT = 2000


async def test_a_flood_of_notifications_costs_a_few_listings_and_notifications(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                           settings={"mcpServers": {"hostile": HOSTILE}}) as editor:
        editor.permission_answer = "always"
        sid, (flooded,) = await run_turn(editor, [call("mcp__hostile__flood", count=COUNT), {"text": "ok"}])
        assert text_of(flooded) == "flooded"
        progress = [p for p in editor.of("agent/tool/progress") if p.get("sessionId") == sid]
        assert 0 < len(progress) < 100, len(progress)
        _, (seen,) = await run_turn(editor, [call("mcp__hostile__seen"), {"text": "ok"}], session_id=sid)
        requests = json.loads(text_of(seen))
        assert requests["tools/list"] <= 4, requests  # the first listing, then one or two for the flood
        listed = await editor.request("agent/session/list", {})
        assert sid in [s["sessionId"] for s in listed["sessions"]]
