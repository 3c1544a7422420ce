"""Workspaces: one host per folder, sessions of two folders at once; no folder at all."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from lsp_harness import running_server


async def test_two_workspaces_run_concurrently_without_interfering(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "name.txt").write_text("I am A\n", encoding="utf-8")
    (b / "name.txt").write_text("I am B\n", encoding="utf-8")
    script = [{"tools": [{"name": "read_file", "arguments": {"path": "name.txt"}}]}, {"text": "read it", "chunkDelayMs": 30}]
    async with running_server(folders=[a, b], sessions_dir=tmp_path / "sessions", script=script) as editor:
        ref_a, ref_b = await asyncio.gather(
            editor.request("agent/followup", {"content": "who are you", "workspaceUri": a.as_uri()}),
            editor.request("agent/followup", {"content": "who are you", "workspaceUri": b.as_uri()}),
        )
        sid_a, sid_b = ref_a["sessionId"], ref_b["sessionId"]
        assert sid_a != sid_b
        await editor.wait_idle(sid_a)
        await editor.wait_idle(sid_b)
        # both ran at the same time: each went running before either went idle
        order = [(sid, status) for sid, status in editor.statuses if sid in (sid_a, sid_b)]
        first_idle = min(order.index((sid_a, "idle")), order.index((sid_b, "idle")))
        assert {(sid_a, "running"), (sid_b, "running")} <= set(order[:first_idle])
        await editor.wait_idle(sid_a)
        await editor.wait_idle(sid_b)
        for sid, text in ((sid_a, "I am A"), (sid_b, "I am B")):
            (result,) = [e for e in editor.events[sid] if e["type"] == "tool/result"]
            assert text in str(result["data"])
            assert editor.streamed_text(sid) == "read it"
        listed_a = (await editor.request("agent/session/list", {"workspaceUri": a.as_uri()}))["sessions"]
        listed_b = (await editor.request("agent/session/list", {"workspaceUri": b.as_uri()}))["sessions"]
        assert [s["sessionId"] for s in listed_a] == [sid_a]
        assert [s["sessionId"] for s in listed_b] == [sid_b]
        everything = (await editor.request("agent/session/list", {}))["sessions"]
        assert {s["sessionId"] for s in everything} == {sid_a, sid_b}

        # a folder added later gets its own host
        c = tmp_path / "c"
        c.mkdir()
        editor.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri=c.as_uri(), name="c")], removed=[])
            )
        )
        created = await editor.request("agent/session/new", {"workspaceUri": c.as_uri(), "title": "in c"})
        listed_c = (await editor.request("agent/session/list", {"workspaceUri": c.as_uri()}))["sessions"]
        assert [(s["sessionId"], s["workspaceUri"]) for s in listed_c] == [(created["sessionId"], c.resolve().as_uri())]


async def test_initialize_without_workspace_folders_and_generic_permission_prompt(tmp_path):
    """No folder: the server works in its current directory. A client without the agentLsp
    capabilities is asked with window/showMessageRequest."""
    sessions = tmp_path / "sessions"
    script = [{"tools": [{"name": "run_command", "arguments": {"command": "echo hi"}}]}, {"text": "ok"}]
    async with running_server(folders=None, sessions_dir=sessions, script=script, agent_capabilities=False) as editor:
        asked: list[str] = []

        @editor.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def on_request(params: types.ShowMessageRequestParams):
            asked.append(params.message)
            return types.MessageActionItem(title="Deny")

        ref = await editor.request("agent/followup", {"content": "run it"})
        # It did not declare that it renders events: it is sent none, and reads the log instead.
        for _ in range(400):
            loaded = await editor.request("agent/session/load", {"sessionId": ref["sessionId"]})
            if loaded["status"] == "idle" and any(e["type"] == "turn/end" for e in loaded["events"]):
                break
            await asyncio.sleep(0.05)
        assert editor.events[ref["sessionId"]] == [] and not editor.statuses
        assert asked and "echo hi" in asked[0]
        (result,) = [e for e in loaded["events"] if e["type"] == "tool/result"]
        assert result["data"]["message"]["isError"] is True and result["data"]["error"]["code"] == "PERMISSION_DENIED"
        assert (await editor.request("agent/session/list", {}))["sessions"]
