"""`agent-lsp acp` runs its own language servers: an edit's result, which the
ACP client shows in the tool card, carries the problem the edit added."""

from __future__ import annotations

import asyncio

import acp
import pytest

from acp_harness import AcpTestClient, acp_agent

pytestmark = pytest.mark.slow

BREAK = {"name": "edit_file", "arguments": {"path": "app.py", "edits": [
    {"oldText": "return total", "newText": "return totl"}]}}


async def test_an_edit_result_in_acp_names_the_error_it_added(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("def add(a: int, b: int) -> int:\n    total = a + b\n    return total\n")
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", [{"tools": [BREAK]}, {"text": "Done."}],
                         language={"enabled": True, "waitSeconds": 20},
                         languageServers={"ruff": {"enabled": False}}) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("tidy")]), 60)
    result = next(u for u in client.of(sid) if u.session_update == "tool_call_update" and u.status == "completed")
    seen = result.content[-1].content.text  # what the model got as the tool's result
    assert "1 new error" in seen and 'app.py:3:12: error: "totl" is not defined' in seen, seen
