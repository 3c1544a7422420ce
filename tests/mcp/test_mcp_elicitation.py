"""An MCP server asks the user (`elicitation/create`), through the real language
server: the HTTP test server's `ask_name` and `confirm` tools elicit while the
scripted model calls them. A client that declared
`experimental.agentLsp.elicitation` gets `agent/elicit` (accept, decline, and
no answer: cancel after the timeout); a plain LSP client gets
`window/showMessageRequest` for a yes/no question and a declined form. Each runs
against a server of the current revision (2026-07-28: the question comes inside
an input-required result) and of the previous one (2025-11-25: a standalone
`elicitation/create` request)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mcp_http_server import HttpMcpServer
from tools_harness import AGENT_PLUGIN, call, run_turn, text_of, tool_server

TURN_S = 40.0


def settings(url: str) -> dict:
    return {
        "mcpServers": {"web": {"type": "http", "url": url, "headers": {"Authorization": "Bearer secret-token"}}},
        "permissions": {"rules": [{"tool": "mcp__web__*", "action": "allow"}]},
        "mcp": {"elicitationTimeoutSeconds": 2},
    }


async def tool_turn(editor, tool: str) -> tuple[str, str]:
    """A turn of a new session whose model calls `tool`: the session and the tool's result text."""
    sid, (result,) = await asyncio.wait_for(run_turn(editor, [call(tool), {"text": "ok"}]), TURN_S)
    return sid, text_of(result)


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "2025-11-25"])
async def test_an_editor_that_renders_questions_answers_accept_decline_and_silence(tmp_path: Path, legacy: bool):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with HttpMcpServer(legacy=legacy) as http, tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                                     agent={**AGENT_PLUGIN, "elicitation": True},
                                                     settings=settings(http.url)) as editor:
        asked: list[dict] = []
        answers: list[dict | None] = [{"action": "accept", "content": {"name": "Ada"}}, {"action": "decline"}, None]
        silence = asyncio.Event()

        @editor.client.feature("agent/elicit")
        async def on_elicit(params):
            asked.append(params)
            answer = answers[len(asked) - 1]
            if answer is None:
                await silence.wait()  # never answered: the server's timeout answers cancel
            return answer

        try:
            sid, accepted = await tool_turn(editor, "mcp__web__ask_name")
            assert accepted == "the name is Ada"
            question = asked[0]
            assert question["server"] == "web" and question["message"] == "Whose name goes on the report?"
            assert question["sessionId"] == sid
            assert question["requestedSchema"]["properties"]["name"]["type"] == "string"
            _, declined = await tool_turn(editor, "mcp__web__ask_name")
            assert declined == "the user answered decline"
            _, unanswered = await tool_turn(editor, "mcp__web__ask_name")
            assert unanswered == "the user answered cancel"
            assert editor.show_message_requests == []
            (listed,) = (await editor.request("agent/mcp/list", {}))["servers"]
            assert listed["protocolVersion"] == ("2025-11-25" if legacy else "2026-07-28")
        finally:
            silence.set()


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "2025-11-25"])
async def test_a_plain_lsp_editor_is_asked_with_buttons_when_one_pick_answers(tmp_path: Path, legacy: bool):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with HttpMcpServer(legacy=legacy) as http, tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                                     agent=AGENT_PLUGIN, settings=settings(http.url)) as editor:
        editor.message_answer = "Yes"
        _, confirmed = await tool_turn(editor, "mcp__web__confirm")
        assert confirmed == "confirmed: True"
        (shown,) = editor.show_message_requests
        assert "'web' asks: Delete the old reports?" in shown.message
        assert [a.title for a in shown.actions] == ["Yes", "No", "Decline"]
        _, form = await tool_turn(editor, "mcp__web__ask_name")  # a text field: buttons cannot answer it
        assert form == "the user answered decline"
        assert len(editor.show_message_requests) == 1
