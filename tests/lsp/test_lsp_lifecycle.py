"""Lifecycle over the wire: $/cancelRequest, folders removed and added back, and a
shutdown in the middle of a turn that leaves a closed log and no running work."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from lsp_harness import TIMEOUT_S, running_server


async def test_cancel_request_cancels_a_running_request_and_the_server_goes_on(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # turn 1 answers; the compaction's summary then streams slowly (3 s)
    script = [{"text": "hello"}, {"text": "x" * 60, "chunkDelayMs": 50}, {"text": "still here"}]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script) as editor:
        sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
        await editor.wait_idle(sid)
        protocol = editor.client.protocol
        future = asyncio.wrap_future(protocol.send_request("agent/session/compact", {"sessionId": sid}, msg_id="compact-1"))
        await editor.wait_for(lambda: "compaction/start" in editor.event_types(sid), what="the summary to start")
        assert not future.done()
        protocol.notify("$/cancelRequest", types.CancelParams(id="compact-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(future, 2.0)  # answered at once, long before the summary would end
        # nothing was compacted, no error was shown, and the session answers again
        statuses = len(editor.statuses)
        await editor.request("agent/followup", {"sessionId": sid, "content": "again"})
        await editor.wait_idle(sid, statuses)
        assert editor.streamed_text(sid).endswith("still here")
        assert "compaction/summary" not in editor.event_types(sid)
        assert not [m for m in editor.client.messages if m.type == types.MessageType.Error]


async def test_removing_a_folder_ends_its_sessions_and_adding_it_back_finds_them(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    script = [{"text": "y" * 200, "chunkDelayMs": 20}]
    async with running_server(folders=[a, b], sessions_dir=tmp_path / "s", script=script) as editor:
        sid_b = (await editor.request("agent/followup", {"content": "long", "workspaceUri": b.as_uri()}))["sessionId"]
        await editor.wait_for(lambda: editor.streamed_text(sid_b), what="b streaming")

        def change(added: list, removed: list) -> None:
            editor.client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in added],
                    removed=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in removed],
                )))

        change([], [b])
        await editor.wait_idle(sid_b)  # its running turn was stopped
        assert len(editor.streamed_text(sid_b)) < 200
        turn_end = [e for e in editor.events[sid_b] if e["type"] == "turn/end"]
        assert turn_end and turn_end[-1]["data"]["reason"]["kind"] == "aborted"
        listed = (await editor.request("agent/session/list", {}))["sessions"]
        assert [s["workspaceUri"] for s in listed] == []  # only folder a is left, and it has no session yet

        # folder a still works
        editor.use_script([{"text": "a works"}])
        sid_a = (await editor.request("agent/followup", {"content": "hi", "workspaceUri": a.as_uri()}))["sessionId"]
        await editor.wait_idle(sid_a)
        assert editor.streamed_text(sid_a) == "a works"

        change([b], [])
        listed = (await editor.request("agent/session/list", {}))["sessions"]
        assert {s["sessionId"] for s in listed} == {sid_a, sid_b}
        loaded = await editor.request("agent/session/load", {"sessionId": sid_b})
        assert loaded["workspaceUri"] == b.resolve().as_uri()


async def test_shutdown_mid_turn_closes_the_log_and_the_process_exits(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "s"
    script = [{"text": "z" * 500, "chunkDelayMs": 10}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script) as editor:
        process = editor.client._server
        sid = (await editor.request("agent/followup", {"content": "long"}))["sessionId"]
        await editor.wait_for(lambda: editor.streamed_text(sid), what="streaming")
    # running_server sent shutdown and exit while the turn was streaming
    assert await asyncio.wait_for(process.wait(), TIMEOUT_S) == 0
    (log,) = sessions.glob(f"*/{sid}.jsonl")
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()[1:]]
    assert events[-1]["type"] == "turn/end" and events[-1]["data"]["reason"]["kind"] == "aborted"
