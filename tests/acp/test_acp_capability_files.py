"""Capability files changed between two ACP prompts take effect at the second, as over
LSP: the real `agent-lsp acp` process, the model a local OpenAI-compatible server
that records what it is sent."""

from __future__ import annotations

import asyncio
import json

import acp

from acp_harness import AcpTestClient, acp_agent
from llm_fake_server import FakeServer, Reply

TURN_S = 30.0


async def test_a_rule_and_an_agent_type_added_between_prompts_reach_the_model_and_the_session_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no agent types of the user's
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = FakeServer()
    await model.start()
    model.queue(Reply.openai_text("First."), Reply.openai_text("Second."))
    client = AcpTestClient()
    try:
        endpoint = {"provider": "openai", "baseUrl": f"{model.url}/v1", "apiKey": "k", "model": "m"}
        async with acp_agent(client, tmp_path / "sessions", None, model_extra=endpoint) as conn:
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            first = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("one")]), TURN_S)

            (workspace / ".agents" / "rules").mkdir(parents=True)
            (workspace / ".agents" / "rules" / "style.md").write_text("Indent with tabs.\n")
            (workspace / ".agents" / "agents").mkdir()
            (workspace / ".agents" / "agents" / "reviewer.md").write_text(
                "---\nname: reviewer\ndescription: Reviews a change for bugs\n---\nYou review code.\n")
            # a new rule rebuilds the session's idle agent: the prompt goes to the new one
            second = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("two")]), TURN_S)
    finally:
        await model.stop()

    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert client.text(sid) == "First.Second."
    before, after = (json.dumps(seen.body) for seen in model.requests)
    for added in ("Indent with tabs.", "Reviews a change for bugs"):
        assert added not in before
        assert added in after, f"the second prompt's request lacks {added!r}"
