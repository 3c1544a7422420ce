"""Two editor windows on one folder = two servers over one sessions directory: a
session open in one is refused by the other (JSON-RPC error naming the holder;
`agent/session/load` gives a read-only snapshot) until the first lets go of it."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from agent_lsp.lsp.protocol import SESSION_IN_USE_CODE

from lsp_harness import running_server


async def _refused(editor, method: str, params: dict) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await editor.request(method, params)
    return caught.value


async def test_a_session_open_in_one_server_is_refused_by_another(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "from A"}]) as first:
        sid = (await first.request("agent/followup", {"content": "hi"}))["sessionId"]
        await first.wait_idle(sid)
        first_pid = first.client._server.pid
        async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "from B"}]) as second:
            # B sees the session in the list, but may not write to it
            listed = (await second.request("agent/session/list", {}))["sessions"]
            assert [s["sessionId"] for s in listed] == [sid]
            # B may look at it: a read-only snapshot that names the holder
            snapshot = await second.request("agent/session/load", {"sessionId": sid})
            live = await first.request("agent/session/load", {"sessionId": sid})
            assert snapshot["heldByPid"] == first_pid and "heldByPid" not in live
            assert snapshot["events"] == live["events"] and snapshot["status"] == "idle"
            for method, params in (
                ("agent/followup", {"sessionId": sid, "content": "mine now"}),
                ("agent/steer", {"sessionId": sid, "content": "mine now"}),
                ("agent/session/delete", {"sessionId": sid}),
            ):
                error = await _refused(second, method, params)
                assert error.code == SESSION_IN_USE_CODE, method
                assert error.data == {"sessionId": sid, "pid": first_pid}
                assert f"process {first_pid}" in error.message
            # its own sessions are unaffected
            own = (await second.request("agent/followup", {"content": "new one"}))["sessionId"]
            await second.wait_idle(own)
            assert second.streamed_text(own) == "from B"
            # A keeps working on its session
            statuses = len(first.statuses)
            await first.request("agent/followup", {"sessionId": sid, "content": "again"})
            await first.wait_idle(sid, statuses)

    # A has exited: the session is free; a new server continues it
    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "resumed"}]) as third:
        statuses = len(third.statuses)
        await third.request("agent/followup", {"sessionId": sid, "content": "resume"})
        await third.wait_idle(sid, statuses)
        assert third.streamed_text(sid).endswith("resumed")
