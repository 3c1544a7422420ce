"""Listing and revoking permission rules through the real server: remembered
answers ("Always allow", "Allow for session") are listed with where they come
from and can be revoked, after which the question is asked again; rules of
the settings are listed but stay where they are written."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_harness import running_server

pytestmark = pytest.mark.asyncio


def command(text: str) -> dict:
    return {"tools": [{"name": "run_command", "arguments": {"command": text}}]}


async def turn(editor, session_id: str | None = None) -> str:
    statuses = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "go", **({"sessionId": session_id} if session_id else {})}))["sessionId"]
    await editor.wait_idle(sid, statuses)
    return sid


async def test_remembered_answers_are_listed_and_a_revoked_one_is_asked_again(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [command("echo always"), {"text": "1"}, command("echo session"), {"text": "2"},
              command("echo always"), {"text": "3"}, command("echo session"), {"text": "4"}]
    settings = {"permissions": {"rules": [{"tool": "read_file", "action": "deny", "pathGlob": "secrets/**"}]}}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script, settings=settings) as editor:
        editor.permission_answer = "always"
        sid = await turn(editor)
        editor.permission_answer = "session"
        await turn(editor, sid)
        assert len(editor.permission_requests) == 2

        rules = (await editor.raw_request("agent/permission/rules", {}))["rules"]
        by_scope = {r["scope"]: r for r in rules}
        assert set(by_scope) == {"settings", "workspace", "session"}
        assert by_scope["settings"] | {"id": ""} == {
            "id": "", "workspaceUri": workspace.as_uri(), "tool": "read_file", "action": "deny",
            "pathGlob": "secrets/**", "scope": "settings", "source": "the permissions.rules setting", "revocable": False}
        assert by_scope["workspace"]["commandPrefix"] == "echo always" and by_scope["workspace"]["revocable"]
        assert by_scope["workspace"]["source"].endswith("permissions.json")
        assert by_scope["session"]["commandPrefix"] == "echo session" and by_scope["session"]["sessionId"] == sid

        left = (await editor.raw_request("agent/permission/revoke", {"id": by_scope["workspace"]["id"]}))["rules"]
        assert {r["scope"] for r in left} == {"settings", "session"}
        left = (await editor.raw_request("agent/permission/revoke",
                                         {"id": by_scope["session"]["id"], "workspaceUri": workspace.as_uri()}))["rules"]
        assert [r["scope"] for r in left] == ["settings"]

        editor.permission_answer = "once"
        await turn(editor, sid)
        await turn(editor, sid)
        asked = [r["command"] for r in editor.permission_requests]
        assert asked == ["echo always", "echo session", "echo always", "echo session"]


async def test_a_settings_rule_or_an_unknown_id_cannot_be_revoked(tmp_path):
    settings = {"permissions": {"rules": [{"tool": "run_command", "action": "allow", "commandPrefix": "ls"}]}}
    async with running_server(folders=[tmp_path / "ws"], sessions_dir=tmp_path / "s", settings=settings) as editor:
        (rule,) = (await editor.raw_request("agent/permission/rules", {}))["rules"]
        with pytest.raises(JsonRpcInvalidParams, match="comes from the permissions.rules setting: change it there"):
            await editor.raw_request("agent/permission/revoke", {"id": rule["id"]})
        with pytest.raises(JsonRpcInvalidParams, match="no permission rule 'workspace-nope'"):
            await editor.raw_request("agent/permission/revoke", {"id": "workspace-nope"})
        with pytest.raises(JsonRpcInvalidParams, match="id"):
            await editor.raw_request("agent/permission/revoke", {})
        assert len((await editor.raw_request("agent/permission/rules", {}))["rules"]) == 1
