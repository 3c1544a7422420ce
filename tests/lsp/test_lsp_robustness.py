"""Errors, cancellation races, tool progress, and a clean exit with nothing left running."""

from __future__ import annotations

import asyncio
import sys

import psutil
import pytest
from lsprotocol import types

from lsp_harness import running_server


async def test_model_failure_is_an_agent_error_and_the_session_stays_usable(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_server(
        folders=[workspace], sessions_dir=tmp_path / "s", script=[{"fail": "AUTH", "message": "bad key"}, {"text": "recovered"}]
    ) as editor:
        sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
        await editor.wait_idle(sid)
        (error,) = [p for p in editor.of("agent/error") if p["sessionId"] == sid]
        assert error["error"]["code"] == "AUTH" and error["turn"] == 1
        statuses = len(editor.statuses)
        await editor.request("agent/followup", {"sessionId": sid, "content": "again"})
        await editor.wait_idle(sid, statuses)
        assert editor.streamed_text(sid) == "recovered"

        # a failed turn started by a command is reported to the user as an error
        editor.use_script([{"fail": "AUTH", "message": "bad key"}])
        statuses = len(editor.statuses)
        ref = await editor.command("agentLsp.newSession")
        await editor.command("agentLsp.followup", {"content": "via command", "sessionId": ref["sessionId"]})
        await editor.wait_idle(ref["sessionId"], statuses)
        await editor.wait_for(
            lambda: any(m.type == types.MessageType.Error and "AUTH" in m.message for m in editor.client.messages),
            what="an error message",
        )


@pytest.mark.skipif(sys.platform == "win32", reason="uses a POSIX shell command")
async def test_cancel_races_and_exit_leave_nothing_behind(tmp_path):
    """Cancel while the editor still holds an applyEdit (in pygls the late answer could
    break the server), stream a command's output, then exit while a command runs."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("old\n", encoding="utf-8")
    script = [
        {"tools": [{"name": "edit_file", "arguments": {"path": "a.txt", "edits": [{"oldText": "old", "newText": "new"}]}}]},
        {"text": "edited"},
    ]
    # the edit tool waits for the editor's answer; the agent abandons it after the grace
    settings = {"cancelGraceSeconds": 0.3}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script, settings=settings) as editor:
        server = psutil.Process(editor.client._server.pid)
        editor.hold_edits = asyncio.Event()
        sid = (await editor.request("agent/followup", {"content": "edit it"}))["sessionId"]
        await editor.wait_for(lambda: editor.applied_edits, what="the applyEdit request")
        await editor.request("agent/cancel", {"sessionId": sid})
        await editor.wait_idle(sid)
        editor.hold_edits.set()  # the editor answers after the turn was cancelled
        await asyncio.sleep(0.1)
        assert not [m for m in editor.client.messages if "Error" in m.message]
        assert (await editor.request("agent/session/list", {}))["sessions"]

        # a command streams its output as agent/tool/progress
        editor.hold_edits = None
        editor.use_script([{"tools": [{"name": "run_command", "arguments": {"command": "echo streamed-line"}}]}, {"text": "ran"}])
        statuses = len(editor.statuses)
        sid2 = (await editor.request("agent/followup", {"content": "run"}))["sessionId"]
        await editor.wait_idle(sid2, statuses)
        progress = [p for p in editor.of("agent/tool/progress") if p["sessionId"] == sid2]
        assert "streamed-line" in "".join(str(p["data"]) for p in progress)

        # a long command is running when the editor shuts the server down
        editor.use_script([{"tools": [{"name": "run_command", "arguments": {"command": "sleep 30"}}]}])
        await editor.request("agent/followup", {"content": "sleep"})
        await editor.wait_for(lambda: server.children(recursive=True), what="the command's process")
        children = server.children(recursive=True)
    # running_server sent shutdown + exit
    server.wait(timeout=5)
    gone, alive = psutil.wait_procs(children, timeout=3)
    assert alive == []
