"""`agent/session/export`: a session as Markdown, the same over LSP and (as
`_agent/session/export`) over ACP, through the real servers."""

from __future__ import annotations

import asyncio

import acp
import pytest
from pygls.exceptions import JsonRpcInvalidParams

from acp_harness import AcpTestClient, acp_agent
from lsp_harness import running_server


async def test_a_session_exports_as_the_same_markdown_over_both_faces(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "Buy it on the way home."}]) as lsp:
        sid = (await lsp.request("agent/followup", {"content": "remember the milk"}))["sessionId"]
        await lsp.wait_idle(sid)
        over_lsp = await lsp.request("agent/session/export", {"sessionId": sid})
        assert over_lsp == {
            "title": "remember the milk",
            "markdown": f"# remember the milk\n\nSession `{sid}`\n\n## You\n\nremember the milk\n\n"
                        "## Agent\n\nBuy it on the way home.\n",
        }
        with pytest.raises(JsonRpcInvalidParams, match="sessionId: Field required"):
            await lsp.request("agent/session/export", {})
        with pytest.raises(JsonRpcInvalidParams, match="s_nope"):
            await lsp.request("agent/session/export", {"sessionId": "s_nope"})

    client = AcpTestClient()
    async with acp_agent(client, sessions, []) as conn:
        await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), 30)
        assert await conn.ext_method("agent/session/export", {"sessionId": sid}) == over_lsp
        with pytest.raises(acp.RequestError, match="sessionId: Field required"):
            await conn.ext_method("agent/session/export", {"session": sid})
