"""Plan mode through the real server: the agent may read and search but an edit
or a command is refused with a clear tool error; todo_write's plan streams as
`plan/update`; the switch is recorded in the log, and leaving plan mode
carries the plan into the next turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_harness import running_server

pytestmark = pytest.mark.asyncio

PLAN = [{"content": "find the bug", "status": "completed"}, {"content": "fix add()", "status": "pending"}]


def tool_results(events: list[dict]) -> dict[str, dict]:
    return {e["data"]["callId"]: e["data"] for e in events if e["type"] == "tool/result"}


async def test_plan_mode_refuses_edits_and_commands_and_the_plan_carries_into_the_next_turn(tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    script = [
        {"when": "plan the fix", "tools": [
            {"name": "read_file", "id": "r", "arguments": {"path": "calc.py"}},
            {"name": "edit_file", "id": "e", "arguments": {"path": "calc.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}},
            {"name": "run_command", "id": "c", "arguments": {"command": "echo hi > made.txt"}},
            {"name": "todo_write", "id": "t", "arguments": {"items": PLAN}},
        ]},
        {"when": "plan the fix", "text": "Here is the plan."},
        {"when": "go ahead", "text": "Fixing it now."},
    ]
    async with running_server(folders=[root], sessions_dir=tmp_path / "sessions", script=script) as editor:
        sid = (await editor.request("agent/session/new", {}))["sessionId"]
        assert await editor.request("agent/session/mode", {"sessionId": sid, "mode": "plan"}) == {
            "mode": "plan", "previous": "default"}
        await editor.request("agent/followup", {"sessionId": sid, "content": "plan the fix"})
        await editor.wait_idle(sid)

        results = tool_results(editor.events[sid])
        assert "return a - b" in results["r"]["message"]["content"][0]["text"]  # reading works
        for refused in ("e", "c"):
            assert results[refused]["error"]["code"] == "PERMISSION_DENIED"
            assert "Plan mode is on for this session" in results[refused]["message"]["content"][0]["text"]
        assert (root / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a - b\n"
        assert not (root / "made.txt").exists()
        assert editor.permission_requests == []  # refused without asking the user
        plans = [e["data"] for e in editor.events[sid] if e["type"] == "plan/update"]
        assert [p["items"] for p in plans] == [PLAN] and plans[0]["callId"] == "t"
        told = [e["data"]["message"] for e in editor.events[sid] if e["type"] == "user/message"]
        assert told[0]["source"] == "plan-mode" and "plan mode" in told[0]["content"][0]["text"]

        assert await editor.request("agent/session/mode", {"sessionId": sid, "mode": "default"}) == {
            "mode": "default", "previous": "plan"}
        await editor.request("agent/followup", {"sessionId": sid, "content": "go ahead"})
        await editor.wait_for(lambda: editor.streamed_text(sid).endswith("Fixing it now."), what="second turn")
        await editor.wait_idle(sid)
        second_turn = [e["data"]["message"] for e in editor.events[sid]
                       if e["type"] == "user/message" and e["data"]["turn"] == 2]
        carried = second_turn[0]["content"][0]["text"]
        assert second_turn[0]["source"] == "plan-mode"
        assert "[x] find the bug\n[ ] fix add()" in carried and "left plan mode" in carried
        assert second_turn[1]["content"][0]["text"] == "go ahead"

        loaded = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
        assert [e["data"] for e in loaded if e["type"] == "session/mode"] == [
            {"mode": "plan", "previous": "default"}, {"mode": "default", "previous": "plan", "carriedPlan": True}]
        # the same mode again records nothing
        await editor.request("agent/session/mode", {"sessionId": sid, "mode": "default"})
        reloaded = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
        assert len([e for e in reloaded if e["type"] == "session/mode"]) == 2

        with pytest.raises(JsonRpcInvalidParams, match="mode"):
            await editor.request("agent/session/mode", {"sessionId": sid, "mode": "yolo"})


async def test_the_mode_is_read_back_from_the_log_after_a_restart(tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    sessions = tmp_path / "sessions"
    script = [{"when": "write it", "tools": [{"name": "write_file", "id": "w", "arguments": {"path": "a.txt", "content": "x"}}]},
              {"when": "write it", "text": "refused"}]
    async with running_server(folders=[root], sessions_dir=sessions) as editor:
        sid = (await editor.request("agent/session/new", {}))["sessionId"]
        await editor.request("agent/session/mode", {"sessionId": sid, "mode": "plan"})
    async with running_server(folders=[root], sessions_dir=sessions, script=script) as editor:
        await editor.request("agent/followup", {"sessionId": sid, "content": "write it"})
        await editor.wait_idle(sid)
        result = tool_results(editor.events[sid])["w"]
        assert result["error"]["code"] == "PERMISSION_DENIED" and not (root / "a.txt").exists()
