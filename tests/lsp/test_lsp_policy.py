"""The managed policy through the real server: what it denies stays denied,
whatever the user's, the editor's or the project's settings allow."""

from __future__ import annotations

import json
import sys

from lsp_harness import running_server

POLICY = """\
deniedTools = ["run_command"]
allowProjectHooks = false
allowProjectMcpServers = false
"""


async def test_a_managed_policy_denies_what_the_project_and_user_settings_allow(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / ".claude").mkdir(parents=True)
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    marker = tmp_path / "project-hook-ran"
    project_hooks = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(project_hooks), encoding="utf-8")
    server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"clock": server}}), encoding="utf-8")
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")

    script = [
        {"tools": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"tools": [{"name": "run_command", "arguments": {"command": "echo ran-the-command"}}]},
        {"text": "done"},
    ]
    allow_commands = {"permissions": {"rules": [{"tool": "run_command", "action": "allow"}]}}  # the user allows
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script,
                              settings=allow_commands, env={"AGENT_LSP_POLICY": str(policy)}) as editor:
        editor.permission_answer = "always"  # the user would trust anything asked
        sid = (await editor.request("agent/followup", {"content": "go"}))["sessionId"]
        await editor.wait_idle(sid)
        header = next(e["data"]["header"] for e in editor.events[sid] if e["type"] == "request/header")
        offered = {t["name"] for t in header["tools"]}
        assert "read_file" in offered and "run_command" not in offered
        read, command = [e["data"] for e in editor.events[sid] if e["type"] == "tool/result"]
        assert not read["message"]["isError"]
        assert command["message"]["isError"]
        assert "ran-the-command" not in json.dumps(command)
        assert not marker.exists()  # the project hook never ran
        assert editor.permission_requests == []  # and nobody was asked to trust it or the server
        (clock,) = (await editor.raw_request("agent/mcp/list", {}))["servers"]
        assert clock["state"] == "failed" and "managed policy" in clock["reason"]
