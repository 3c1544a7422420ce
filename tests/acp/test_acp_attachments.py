"""`@server:uri` in an ACP prompt, through the real `agent-lsp acp` process and the
HTTP MCP test server: the user's own words attach the resource, as over LSP; a
file the user embedded in the prompt is sent as it is, mentions and all."""

from __future__ import annotations

import asyncio

import acp
from acp.schema import EmbeddedResourceContentBlock, TextResourceContents

from acp_harness import AcpTestClient, acp_agent
from mcp_http_server import HttpMcpServer

TURN_S = 60.0  # the first attachment waits for the MCP server's first connection


async def test_a_mention_in_the_prompt_attaches_the_resource_and_one_in_an_embedded_file_does_not(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    client = AcpTestClient()
    async with HttpMcpServer() as http:
        servers = {"web": {"type": "http", "url": http.url, "headers": {"Authorization": "Bearer secret-token"}}}
        async with acp_agent(client, tmp_path / "sessions", [], mcpServers=servers) as conn:
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("Summarise @web:docs://readme.")]), TURN_S)
            heard = client.text(sid)  # the scripted model says back what the request carried
            assert "Summarise @web:docs://readme." in heard and "Call echo." in heard

            notes = EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
                uri=(workspace / "notes.md").as_uri(), text="see @web:docs://readme"))
            before = len(heard)
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("Read my notes."), notes]), TURN_S)
            heard = client.text(sid)[before:]
            assert "see @web:docs://readme" in heard and "Call echo." not in heard
