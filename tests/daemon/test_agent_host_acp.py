"""`agent-lsp acp --host`: an ACP client (the official SDK's) served by the
same agent host as an LSP window, each with its own settings, sessions and
environment."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import acp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "acp"))
from acp_harness import AcpTestClient, agent_env, settings_arg  # noqa: E402

from lsp_harness import running_server  # noqa: E402

ACP_CONNECTOR = [sys.executable, "-m", "agent_lsp", "acp", "--host"]
LSP_CONNECTOR = [sys.executable, "-m", "agent_lsp", "--host"]


async def test_an_acp_client_and_an_lsp_window_share_one_host(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    socket_file = run / "host.sock"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    host = {"AGENT_LSP_HOST_SOCKET": str(socket_file)}
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "to the LSP window"}],
                                  env=host, command=LSP_CONNECTOR) as window:
            pid = int((run / "host.sock.lock").read_text())
            client = AcpTestClient()
            env = dict(agent_env(sessions), **host)
            async with acp.spawn_agent_process(client, *ACP_CONNECTOR,
                                               *settings_arg(sessions, [{"text": "to the ACP client"}]),
                                               env=env) as (conn, process):
                await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                                       client_capabilities=client.capabilities()), 30)
                session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), 30)
                reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                           prompt=[acp.text_block("hi")]), 30)
                assert reply.stop_reason == "end_turn"
                text = "".join(u.content.text for u in client.of(session.session_id)
                               if getattr(u, "session_update", "") == "agent_message_chunk")
                assert text == "to the ACP client"  # its own --settings, on the same host
                assert int((run / "host.sock.lock").read_text()) == pid
            sid = (await window.request("agent/followup", {"content": "hi"}))["sessionId"]
            await window.wait_idle(sid)
            assert window.streamed_text(sid) == "to the LSP window"
            listed = {s["sessionId"] for s in (await window.request("agent/session/list", {}))["sessions"]}
            assert {sid, session.session_id} <= listed  # one sessions directory, both faces' sessions
    finally:
        try:
            os.kill(int((run / "host.sock.lock").read_text()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
