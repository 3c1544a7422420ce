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
