"""A file revert the server was killed in the middle of, found when
`agent-lsp acp` starts again: every file is put back as it was before the
revert, and the client's `session/load` shows which (the kill itself, through
the LSP face: tests/lsp_tools/test_revert_crash.py)."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import acp

from acp_harness import AcpTestClient, acp_agent


async def test_an_interrupted_revert_is_rolled_back_and_the_load_names_the_files(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    async with acp_agent(AcpTestClient(), sessions, [{"text": "done"}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        assert (await conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])).stop_reason == "end_turn"
    (log,) = sessions.rglob(f"{sid}.jsonl")
    # what a server killed half way through reverting two files leaves: its intent, one file changed
    (workspace / "a.py").write_text("reverted half way\n", encoding="utf-8")
    (workspace / "b.py").write_text("b as it was\n", encoding="utf-8")
    intent = {"id": "x", "sessionId": sid, "operation": "rewind", "turn": 1, "startSeq": 10**6, "phase": "apply",
              "events": [], "files": [
                  {"path": str(workspace / name), "before": base64.b64encode(text.encode()).decode()}
                  for name, text in (("a.py", "a as it was\n"), ("b.py", "b as it was\n"))]}
    (log.parent / "reverts").mkdir()
    (log.parent / "reverts" / f"{sid}.json").write_text(json.dumps(intent), encoding="utf-8")

    client = AcpTestClient()
    async with acp_agent(client, sessions, []) as conn:
        await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), 30)
        assert (workspace / "a.py").read_text(encoding="utf-8") == "a as it was\n"
        assert (workspace / "b.py").read_text(encoding="utf-8") == "b as it was\n"
        told = client.text(sid)
        assert "The server stopped in the middle of the rewind to before turn 1" in told
        assert "put back as they were before it: a.py." in told  # only the file that had changed
    assert not (log.parent / "reverts" / f"{sid}.json").exists()
