"""A client that gives `agent-lsp acp` no model settings and no key in its
environment (the real process, as agentic.nvim with an empty `env` starts
it): the scripted demo model answers, and both the first answer and the
session's model option say plainly that no model is configured and how to
set one."""

from __future__ import annotations

import asyncio
import json

import acp

from acp_harness import AGENT, AcpTestClient, agent_env

HOW = "ANTHROPIC_API_KEY or OPENAI_API_KEY"


async def test_with_no_model_configured_the_first_answer_and_the_model_option_say_so(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    client = AcpTestClient()
    async with acp.spawn_agent_process(client, *AGENT, "--settings", json.dumps({"sessionsDir": str(sessions)}),
                                       env=agent_env(sessions)) as (conn, _process):
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                               client_capabilities=client.capabilities()), 30)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = new.session_id
        (option,) = new.config_options
        (offered,) = [o for o in option.options if o.value == option.current_value]
        assert offered.name == "scripted demo (no model configured)"
        assert "No model is configured" in offered.description and HOW in offered.description

        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("hello")]), 30)
        first = client.text(sid)
        assert first.startswith("No model is configured, so agent_lsp's built-in scripted demo model answers")
        assert HOW in first and "config.toml" in first
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("again")]), 30)
        assert client.text(sid).count("No model is configured") == 1  # said once, not on every answer
