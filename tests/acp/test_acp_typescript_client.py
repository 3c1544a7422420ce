"""A full session driven by the official ACP TypeScript SDK's client (tests/acp/node)
against the real `agent-lsp acp` process: what an editor built on that SDK sees."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from acp_harness import AGENT, agent_env, settings_arg

NODE_DIR = __import__("pathlib").Path(__file__).resolve().parent / "node"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (NODE_DIR / "node_modules" / "@agentclientprotocol" / "sdk").is_dir(),
    reason="needs node and tests/acp/node's packages (npm ci in tests/acp/node; .ci/dev.py test does it)",
)

EDIT = {"name": "edit_file", "arguments": {"path": "app.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}}


def test_the_typescript_sdk_client_runs_a_whole_session(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("x = 1\n")
    sessions = tmp_path / "sessions"
    script = [{"text": "Fixing.", "tools": [EDIT]}, {"text": "Done."}, {"hang": "hmm"}]
    command = [*AGENT, *settings_arg(sessions, script, permissions={"defaults": {"write": "ask"}})]
    run = subprocess.run(["node", "scenario.mjs", json.dumps(command), str(workspace), str(workspace / "app.py")],
                         cwd=NODE_DIR, env=agent_env(sessions), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    assert seen["init"]["agentCapabilities"]["loadSession"] is True
    assert seen["first"]["stopReason"] == "end_turn" and seen["answerText"] == "Fixing.Done."
    kinds = seen["kinds"]
    assert "agent_message_chunk" in kinds[:kinds.index("tool_call")] and kinds[-1] == "agent_message_chunk"
    call, done = seen["toolUpdates"]
    assert (call["sessionUpdate"], call["kind"], call["status"]) == ("tool_call", "edit", "pending")
    assert call["locations"] == [{"path": str(workspace / "app.py")}]
    assert done["status"] == "completed" and done["content"][0]["type"] == "diff"
    assert [p["toolCall"]["toolCallId"] for p in seen["permissions"]] == [call["toolCallId"]]
    assert seen["writes"] == [[str(workspace / "app.py"), "x = 2  # unsaved\n"]]
    assert (workspace / "app.py").read_text() == "x = 1\n"  # the client's buffer got it, not the disk
    assert seen["cancelled"]["stopReason"] == "cancelled" and seen["cancelMs"] < 1000
    assert [s["sessionId"] for s in seen["listed"]["sessions"]] == [seen["sessionId"]]
    assert seen["replayEqualsLive"] is True
    assert seen["replayedPrompts"] == ["fix x", "more"]
