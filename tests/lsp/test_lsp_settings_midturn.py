"""Settings changed while a session's turn runs: the turn keeps its settings, the
session's next turn is built with the new ones, and the session goes on."""

from __future__ import annotations

from agent_lsp.config import Settings
from agent_lsp.workspace.disk_editor import DiskEditor
from agent_lsp.workspace.host import WorkspaceHost

from lsp_harness import running_server


async def test_a_running_session_picks_up_new_settings_for_its_next_turn(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    slow = [{"text": "old model", "chunkDelayMs": 40}]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=slow) as editor:
        sid = (await editor.request("agent/followup", {"content": "first"}))["sessionId"]
        await editor.wait_for(lambda: editor.streamed_text(sid), what="the first chunk")
        # mid-turn: another model, and commands are now denied
        editor.configure({
            "model": {"provider": "scripted", "script": [
                {"tools": [{"name": "run_command", "arguments": {"command": "echo hi"}}]},
                {"text": "new model"},
            ]},
            "permissions": {"rules": [{"tool": "run_command", "action": "deny"}]},
            "maxParallelToolCalls": 2,
        })
        await editor.wait_idle(sid)
        assert editor.streamed_text(sid) == "old model"  # the running turn kept its settings

        statuses = len(editor.statuses)
        ref = await editor.request("agent/followup", {"sessionId": sid, "content": "second"})
        assert ref["sessionId"] == sid
        await editor.wait_idle(sid, statuses)
        assert editor.streamed_text(sid) == "old modelnew model"
        (result,) = [e for e in editor.events[sid] if e["type"] == "tool/result"]
        assert result["data"]["error"]["code"] == "PERMISSION_DENIED"  # the new rule, not a question
        assert editor.permission_requests == []
        (listed,) = (await editor.request("agent/session/list", {}))["sessions"]
        assert listed["sessionId"] == sid and listed["turns"] == 2
        # the client's view of the session is whole: the live stream has every seq once,
        # in order, across the rebuild, and matches the stored log
        expected = 0
        for event in editor.events[sid]:
            assert event["seq"] == expected, (event, expected)
            expected = event.get("lastSeq", event["seq"]) + 1
        loaded = await editor.request("agent/session/load", {"sessionId": sid})
        assert [e["seq"] for e in loaded["events"]] == list(range(len(loaded["events"]))) and len(loaded["events"]) == expected
        assert sum(e["type"] == "turn/start" for e in loaded["events"]) == 2


async def test_a_new_session_rebuilt_by_new_settings_before_its_first_turn_streams_every_seq(tmp_path):
    # A panel's "New session", then a settings change, then the first message: the
    # agent is rebuilt from the log (a load marks it with session/end-seed, seq 0).
    # The client gets that seq too: a hole in the live stream makes it reload the
    # session while the turn runs.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=[{"text": "old"}]) as editor:
        sid = (await editor.request("agent/session/new", {}))["sessionId"]
        editor.use_script([{"text": "new model"}])
        await editor.request("agent/session/list", {})  # answered once the settings are applied
        await editor.request("agent/followup", {"sessionId": sid, "content": "first"})
        await editor.wait_idle(sid)
        await editor.wait_for(lambda: editor.event_types(sid)[-1:] == ["turn/end"], what="turn/end")
        assert editor.streamed_text(sid) == "new model"
        expected = 0  # every seq once, in order (merged chunks cover seq..lastSeq)
        for event in editor.events[sid]:
            assert event["seq"] == expected, (event, expected)
            expected = event.get("lastSeq", event["seq"]) + 1
        loaded = await editor.request("agent/session/load", {"sessionId": sid})
        assert len(loaded["events"]) == expected and loaded["events"][0]["type"] == "session/end-seed"


async def test_the_rebuilt_agent_has_every_new_setting(tmp_path):
    def settings(**over) -> Settings:
        data = {"model": {"provider": "scripted", "script": [{"text": "slow", "chunkDelayMs": 20}]},
                "sessionsDir": str(tmp_path / "s")}
        data.update(over)
        return Settings.model_validate(data)

    host = WorkspaceHost(tmp_path, settings=settings(), editor=DiskEditor([tmp_path]), env={})
    agent = host.new_session()
    agent.followup("go")
    assert agent.status == "running"
    new = settings(maxParallelToolCalls=3, model={"provider": "scripted", "script": [{"text": "fast"}]})
    await host.update_settings(new)
    assert host.agent(agent.session_id) is agent  # still running: untouched
    await agent.when_idle()
    rebuilt = host.agent(agent.session_id)
    assert rebuilt is not agent and rebuilt.session_id == agent.session_id
    assert rebuilt.options.max_parallel_tool_calls == 3
    rebuilt.followup("again")
    await rebuilt.when_idle()
    texts = [e.data["message"] for e in rebuilt.session.events if e.type == "assistant/message"]
    assert len(texts) == 2 and "fast" in str(texts[-1])
    await host.close()

