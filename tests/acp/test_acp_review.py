"""Reviewing the agent's edits over ACP ("edits.review": "review"): the
extension methods `_agent/review/list` and `_agent/review/resolve` answer as
the LSP face's `agent/review/*` do (one table serves both), driven by the
official ACP SDK's client through the real `agent-lsp acp` process."""

from __future__ import annotations

import asyncio
import json

import acp
import pytest

from acp_harness import AcpTestClient, acp_agent

ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
EDITS = {"name": "edit_file", "arguments": {"path": "app.py", "edits": [
    {"oldText": "line 2\n", "newText": "LINE TWO\n"}, {"oldText": "line 15\n", "newText": "LINE FIFTEEN\n"}]}}


async def test_acp_client_lists_keeps_and_undoes_held_edits(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    app = workspace / "app.py"
    app.write_text(ORIGINAL, encoding="utf-8")
    client = AcpTestClient(answers=["allow_always"])
    script = [{"tools": [EDITS]}, {"text": "Edited."}, {"text": "Understood."}]
    async with acp_agent(client, tmp_path / "sessions", script, edits={"review": "review"}) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("shout")]), 30)
        assert answer.stop_reason == "end_turn"

        hunks = (await conn.ext_method("agent/review/list", {"sessionId": sid}))["hunks"]
        assert [(h["range"]["start"]["line"], h["oldText"], h["newText"], h["uri"]) for h in hunks] == [
            (1, "line 2\n", "LINE TWO\n", app.as_uri()), (14, "line 15\n", "LINE FIFTEEN\n", app.as_uri())]
        assert (await conn.ext_method("agent/review/list", {"uri": app.as_uri()}))["hunks"] == hunks

        undone = await conn.ext_method("agent/review/resolve", {"sessionId": sid, "hunkId": hunks[0]["hunkId"],
                                                                "action": "undo"})
        assert undone == {"resolved": [hunks[0]["hunkId"]], "skipped": []}
        assert app.read_text(encoding="utf-8") == ORIGINAL.replace("line 15\n", "LINE FIFTEEN\n")
        kept = await conn.ext_method("agent/review/resolve", {"sessionId": sid, "all": True, "action": "keep"})
        assert kept == {"resolved": [hunks[1]["hunkId"]], "skipped": []}
        assert (await conn.ext_method("agent/review/list", {}))["hunks"] == []

        # the same refusals as the LSP face, as invalid params
        with pytest.raises(acp.RequestError, match="hunkId: name a hunk") as refused:
            await conn.ext_method("agent/review/resolve", {"sessionId": sid, "action": "undo"})
        assert refused.value.code == -32602
        with pytest.raises(acp.RequestError, match="no pending change nope.1"):
            await conn.ext_method("agent/review/resolve", {"sessionId": sid, "hunkId": "nope.1", "action": "undo"})
        with pytest.raises(acp.RequestError, match="uri: not a file URI"):
            await conn.ext_method("agent/review/list", {"uri": "untitled:Untitled-1"})
        with pytest.raises(acp.RequestError, match="action"):
            await conn.ext_method("agent/review/resolve", {"sessionId": sid, "all": True, "action": "maybe"})

        # the model hears of the undo at its next request
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("next")]), 30)
    (log,) = (tmp_path / "sessions").rglob(f"{sid}.jsonl")
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()[1:]]
    told = [e["data"]["message"] for e in events if e.get("type") == "user/message"
            and e["data"]["message"].get("source") == "review"]
    assert len(told) == 1 and "-line 2\n+LINE TWO\n" in told[0]["content"][0]["text"]
    assert [e["data"]["action"] for e in events if e.get("type") == "review/resolve"] == ["undo", "keep"]


async def test_held_edits_come_back_after_the_agent_process_restarts(tmp_path):
    """Over ACP the held edits are on disk: a new agent process lists them from
    the session's log and the file, and undoes them."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    app = workspace / "app.py"
    app.write_text(ORIGINAL, encoding="utf-8")
    sessions = tmp_path / "sessions"
    script = [{"tools": [EDITS]}, {"text": "Edited."}]
    async with acp_agent(AcpTestClient(answers=["allow_always"]), sessions, script, edits={"review": "review"}) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("shout")]), 30)
        before = (await conn.ext_method("agent/review/list", {"sessionId": sid}))["hunks"]
    assert len(before) == 2
    async with acp_agent(AcpTestClient(), sessions, [], edits={"review": "review"}) as conn:
        await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), 30)
        assert (await conn.ext_method("agent/review/list", {"sessionId": sid}))["hunks"] == before
        undone = await conn.ext_method("agent/review/resolve", {"sessionId": sid, "all": True, "action": "undo"})
        assert undone == {"resolved": [h["hunkId"] for h in before], "skipped": []}
        assert app.read_text(encoding="utf-8") == ORIGINAL
