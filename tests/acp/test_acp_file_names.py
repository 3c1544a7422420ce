"""A file whose name holds a line break or a terminal control sequence, read
by the agent through the ACP face: the tool call's title the client shows
names it on one line, quoted and escaped, never raw."""

from __future__ import annotations

import asyncio

import acp

from acp_harness import AcpTestClient, acp_agent

NAME = "notes\n\x1b]52;c;aGk=\x07.txt"
SHOWN = '"notes\\n\\x1b]52;c;aGk=\\x07.txt"'


async def test_a_tool_call_title_shows_a_hostile_file_name_escaped(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / NAME).write_text("hello\n", encoding="utf-8")
    client = AcpTestClient()
    script = [{"tools": [{"name": "read_file", "arguments": {"path": NAME}}]},  # the raw name
              {"tools": [{"name": "read_file", "arguments": {"path": SHOWN}}]},  # as a listing shows it
              {"text": "Read."}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("read it")]), 30)
        assert answer.stop_reason == "end_turn"
        calls = [u for u in client.of(sid) if u.session_update == "tool_call"]
        assert [c.title for c in calls] == [f"Read {SHOWN}"] * 2
        done = [u for u in client.of(sid) if u.session_update == "tool_call_update" and u.status == "completed"]
        assert len(done) == 2, "both name the real file"
