"""Sessions survive the server: list, load and replay after a restart (same sessionsDir)."""

from __future__ import annotations

from lsp_harness import running_server


async def test_session_list_load_and_replay_after_a_restart(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"

    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "first answer"}]) as editor:
        ref = await editor.request("agent/followup", {"content": "remember me"})
        sid = ref["sessionId"]
        await editor.wait_idle(sid)
        live_events = list(editor.events[sid])

    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "second answer"}]) as editor:
        listed = (await editor.request("agent/session/list", {"workspaceUri": workspace.as_uri()}))["sessions"]
        (info,) = listed
        assert info["sessionId"] == sid and info["turns"] == 1 and info["status"] == "idle"
        assert info["title"] == "remember me"
        assert info["workspaceUri"] == workspace.resolve().as_uri()

        loaded = await editor.request("agent/session/load", {"sessionId": sid})
        replayed = loaded["events"]
        # the replay has every event the live stream had (the stream may merge deltas)
        assert [e["seq"] for e in replayed] == list(range(len(replayed)))
        live_types = [e["type"] for e in live_events]
        live_kept = [t for t in live_types if t != "assistant/chunk"]
        assert [e["type"] for e in replayed if e["type"] != "assistant/chunk"][: len(live_kept)] == live_kept
        assert "".join(
            e["data"]["chunk"].get("text", "") for e in replayed if e["type"] == "assistant/chunk"
        ) == "first answer"

        # the loaded session goes on: turn 2, its events continue the seq numbering
        await editor.request("agent/followup", {"sessionId": sid, "content": "again"})
        await editor.wait_idle(sid)
        new_events = editor.events[sid]
        assert new_events[0]["seq"] == len(replayed)
        assert any(e["type"] == "turn/start" and e["data"]["turn"] == 2 for e in new_events)

        assert await editor.request("agent/session/delete", {"sessionId": sid}) == {"deleted": True}
        assert (await editor.request("agent/session/list", {}))["sessions"] == []
        assert await editor.request("agent/session/delete", {"sessionId": sid}) == {"deleted": False}


async def test_session_titles_are_the_users_words_not_the_attached_context(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    uri = (workspace / "app.py").as_uri()
    selection = {"kind": "selection", "uri": uri, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}},
                 "text": "import os\n" * 3}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions", script=[{"text": "ok"}]) as editor:
        worded = await editor.request("agent/followup", {"content": "why does this\nfail?", "context": [selection]})
        await editor.wait_idle(worded["sessionId"])
        statuses = len(editor.statuses)
        bare = await editor.request("agent/followup", {"content": "", "context": [{"kind": "file", "uri": uri}]})
        await editor.wait_idle(bare["sessionId"], statuses)
        listed = (await editor.request("agent/session/list", {}))["sessions"]
    titles = {s["sessionId"]: s["title"] for s in listed}
    assert titles == {worded["sessionId"]: "why does this fail?", bare["sessionId"]: "(context only: app.py)"}
