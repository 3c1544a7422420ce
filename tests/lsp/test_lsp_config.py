"""Configuration over the wire: initializationOptions < workspace/configuration; bad values reported."""

from __future__ import annotations

from lsprotocol import types

from lsp_harness import running_server


async def test_workspace_configuration_overrides_initialization_options_and_bad_values_are_reported(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    configuration = {"model": {"provider": "scripted", "script": [{"text": "from workspace config"}]}}
    async with running_server(
        folders=[workspace],
        sessions_dir=tmp_path / "sessions",
        script=[{"text": "from init options"}],
        settings={"logLevel": "loud"},
        configuration=configuration,
    ) as editor:
        ref = await editor.request("agent/followup", {"content": "hi"})
        await editor.wait_idle(ref["sessionId"])
        assert editor.streamed_text(ref["sessionId"]) == "from workspace config"
        warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
        assert any("logLevel" in w for w in warnings)  # the bad init option was reported

        # a bad value in a later change: reported, the previous value kept, good keys applied
        shown = len(editor.client.messages)
        editor.configure({"model": {"provider": "no-such-provider", "script": [{"text": "new script"}]}})
        ref = await editor.request("agent/followup", {"content": "again"})
        await editor.wait_idle(ref["sessionId"])
        assert editor.streamed_text(ref["sessionId"]) == "new script"
        await editor.wait_for(
            lambda: any("model.provider" in m.message for m in editor.client.messages[shown:]), what="warning"
        )


async def test_permission_rules_from_the_settings(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    rules = {"permissions": {"rules": [{"tool": "run_command", "action": "allow", "commandPrefix": "echo"}]}}
    script = [
        {"tools": [{"name": "run_command", "arguments": {"command": "echo allowed"}, "id": "c1"}]},
        {"tools": [{"name": "run_command", "arguments": {"command": "ls"}, "id": "c2"}]},
        {"text": "done"},
    ]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script, settings=rules) as editor:
        editor.permission_answer = "deny"
        sid = (await editor.request("agent/followup", {"content": "run things"}))["sessionId"]
        await editor.wait_idle(sid)
        assert [r["command"] for r in editor.permission_requests] == ["ls"]  # echo was allowed by the rule
        results = {e["data"]["callId"]: e["data"] for e in editor.events[sid] if e["type"] == "tool/result"}
        assert "allowed" in str(results["c1"]) and results["c1"]["message"]["isError"] is False
        assert results["c2"]["message"]["isError"] is True and results["c2"]["error"]["code"] == "PERMISSION_DENIED"


async def test_settings_pushed_with_did_change_configuration(tmp_path):
    """A client without `workspace/configuration` pushes the settings in
    didChangeConfiguration ({"agentLsp": {...}}); a bad value there is reported and
    the previous value kept."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=[{"text": "initial"}],
                              configuration_capability=False) as editor:

        def push(settings: dict) -> None:
            editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"agentLsp": settings}))

        push({"model": {"provider": "scripted", "script": [{"text": "pushed"}]}})
        sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
        await editor.wait_idle(sid)
        assert editor.streamed_text(sid) == "pushed"
        assert editor.configuration_pulls == 0

        shown = len(editor.client.messages)
        push({"model": {"provider": "scripted", "script": [{"text": "pushed"}]}, "maxParallelToolCalls": 0})
        statuses = len(editor.statuses)
        await editor.request("agent/followup", {"sessionId": sid, "content": "again"})
        await editor.wait_idle(sid, statuses)
        await editor.wait_for(
            lambda: any("maxParallelToolCalls" in m.message and "kept the previous value" in m.message
                        for m in editor.client.messages[shown:]),
            what="the warning about maxParallelToolCalls",
        )
        # nothing valid changed: the same agent goes on (its script past its one reply)
        assert editor.streamed_text(sid) == "pushed(scripted model) You said: again"
