"""One store for both faces: a session started over LSP continues over ACP, ACP
sessions are listed over LSP, and a session open in one process is refused by the other."""

from __future__ import annotations

import asyncio

import acp
import pytest

from acp_harness import AcpTestClient, acp_agent
from lsp_harness import running_server


async def test_a_session_started_over_lsp_is_loaded_over_acp_and_continued(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "hello from LSP"}]) as lsp:
        sid = (await lsp.request("agent/followup", {"content": "started in VS Code"}))["sessionId"]
        await lsp.wait_idle(sid)

    client = AcpTestClient()
    async with acp_agent(client, sessions, [{"text": "and now from Zed"}]) as conn:
        listed = await conn.list_sessions(cwd=str(workspace))
        assert [s.session_id for s in listed.sessions] == [sid]
        await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), 30)
        replayed = [(u.session_update, u.content.text) for u in client.of(sid)
                    if u.session_update in ("user_message_chunk", "agent_message_chunk")]
        assert replayed[0] == ("user_message_chunk", "started in VS Code")
        assert "".join(text for kind, text in replayed[1:]) == "hello from LSP"
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("go on")]), 30)
        assert answer.stop_reason == "end_turn"
        assert client.text(sid) == "hello from LSPand now from Zed"
        acp_sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id

    async with running_server(folders=[workspace], sessions_dir=sessions, script=[]) as lsp:
        listed = (await lsp.request("agent/session/list", {}))["sessions"]
        assert {s["sessionId"] for s in listed} == {sid, acp_sid}
        assert next(s for s in listed if s["sessionId"] == sid)["turns"] == 2
        loaded = await lsp.request("agent/session/load", {"sessionId": sid})
        texts = [e["data"]["message"]["content"][0]["text"] for e in loaded["events"] if e["type"] == "user/message"]
        assert texts == ["started in VS Code", "go on"]


async def test_a_session_open_over_lsp_is_refused_over_acp(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "mine"}]) as lsp:
        sid = (await lsp.request("agent/followup", {"content": "hi"}))["sessionId"]
        await lsp.wait_idle(sid)
        client = AcpTestClient()
        async with acp_agent(client, sessions, []) as conn:
            with pytest.raises(acp.RequestError) as refused:
                await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
            assert refused.value.code == -32010 and "open in another agent-lsp process" in str(refused.value)
