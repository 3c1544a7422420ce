"""MCP servers through the real language server (a subprocess), driven by the
scripted model: configuration from the editor and from `.mcp.json`, the trust
question, permissions, a crashed server, and no server left behind."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import psutil
import pytest

from tools_harness import call, error_code, is_error, text_of, tool_server, wait_until

TURN_S = 40.0  # a turn's first request waits for the MCP server's cold start (seconds on a loaded machine)
TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
TOOL = "mcp__time__get_current_time"


async def run_turn(editor, script: list, session_id: str | None = None) -> tuple[str, list[dict]]:
    """One turn with this scripted model: the session id and the turn's tool results."""
    editor.use_script(script)
    before = len(editor.statuses)
    params = {"content": "go", **({"sessionId": session_id} if session_id else {})}
    sid = (await editor.request("agent/followup", params))["sessionId"]
    seen = len(editor.events[sid]) if session_id else 0
    await editor.wait_for(lambda: (sid, "idle") in editor.statuses[before:], timeout=TURN_S, what="the turn to end")
    await editor.wait_for(lambda: editor.event_types(sid)[-1:] == ["turn/end"], what="turn/end")
    return sid, [e["data"] for e in editor.events[sid][seen:] if e["type"] == "tool/result"]


def mcp_processes(server_pid: int) -> list[psutil.Process]:
    """The MCP servers (and their launchers) the language server started."""
    try:
        children = psutil.Process(server_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [p for p in children if any(_cmdline_has(p, word) for word in ("mcp_server_time", "launcher.py", "300"))]


def _cmdline_has(process: psutil.Process, word: str) -> bool:
    try:
        return any(word in part for part in process.cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return False


def alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def headers_offered(editor, sid: str) -> list[list[str]]:
    return [[t["name"] for t in e["data"]["header"]["tools"]] for e in editor.events[sid] if e["type"] == "request/header"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_a_configured_server_s_tool_asks_runs_and_its_result_reaches_the_model(workspace, tmp_path):
    async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings={"mcpServers": {"time": TIME}}) as editor:
        sid, (result,) = await run_turn(editor, [call(TOOL, timezone="Europe/Lisbon"), {"text": "it is late"}])
        assert json.loads(text_of(result))["timezone"] == "Europe/Lisbon"
        (asked,) = editor.permission_requests
        assert asked["tool"] == TOOL and "get_current_time" in asked["title"] and "Europe/Lisbon" in asked["detail"]
        offered = headers_offered(editor, sid)
        assert TOOL in offered[0]  # the first request already offered it; the log says so
        (listed,) = (await editor.request("agent/mcp/list", {"workspaceUri": workspace.as_uri()}))["servers"]
        assert listed["name"] == "time" and listed["state"] == "ready" and listed["toolCount"] == 2
        assert listed["source"] == "editor" and listed["transport"] == "stdio" and listed["protocolVersion"]
        kinds = [e["type"] for e in editor.events[sid]]
        assert kinds.index("tool/result") < len(kinds) - 1 - kinds[::-1].index("assistant/message")  # a next step followed


async def test_a_denied_permission_reaches_the_model_as_a_tool_error(workspace, tmp_path):
    async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings={"mcpServers": {"time": TIME}}) as editor:
        editor.permission_answer = "deny"
        _, (result,) = await run_turn(editor, [call(TOOL, timezone="UTC"), {"text": "ok"}])
        assert is_error(result) and error_code(result) == "PERMISSION_DENIED"
        assert "denied" in text_of(result)


async def test_a_rule_for_the_whole_server_allows_without_asking(workspace, tmp_path):
    settings = {"mcpServers": {"time": TIME}, "permissions": {"rules": [{"tool": "mcp__time__*", "action": "allow"}]}}
    async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings=settings) as editor:
        _, (result,) = await run_turn(editor, [call(TOOL, timezone="UTC"), {"text": "ok"}])
        assert not is_error(result)
        assert editor.permission_requests == []


async def test_project_servers_start_only_once_trusted_and_the_trust_is_remembered(workspace, tmp_path):
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": TIME, "broken": {"type": "ftp"}}}))
    sessions = tmp_path / "sessions"
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        before = {s["name"]: s for s in (await editor.request("agent/mcp/list", {}))["servers"]}
        assert before["time"]["state"] == "needs-authorization" and before["time"]["source"] == "project"
        assert before["broken"]["state"] == "failed" and "ftp" in before["broken"]["reason"]
        editor.permission_answer = "deny"
        _, (result,) = await run_turn(editor, [call(TOOL, timezone="UTC"), {"text": "ok"}])
        assert error_code(result) == "UNKNOWN_TOOL"  # not trusted: not started, not offered
        trust = [r for r in editor.permission_requests if r["tool"] == "mcp_server"]
        assert len(trust) == 1 and "'time'" in trust[0]["title"] and "mcp_server_time" in trust[0]["detail"]
        assert mcp_processes(editor.server_pid) == []
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        editor.permission_answer = "always"
        _, (result,) = await run_turn(editor, [call(TOOL, timezone="UTC"), {"text": "ok"}])
        assert not is_error(result), text_of(result)
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        editor.permission_answer = "deny"  # neither question may be asked again
        settings_rule = {"permissions": {"rules": [{"tool": TOOL, "action": "allow"}]}}
        editor.configure({"model": {"provider": "scripted", "script": []}, **settings_rule})
        _, (result,) = await run_turn(editor, [call(TOOL, timezone="UTC"), {"text": "ok"}])
        assert not is_error(result), text_of(result)
        assert [r for r in editor.permission_requests if r["tool"] == "mcp_server"] == []


async def test_a_crashed_server_is_restarted(workspace, tmp_path):
    settings = {"mcpServers": {"time": TIME}, "permissions": {"rules": [{"tool": "mcp__time__*", "action": "allow"}]}}
    async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings=settings) as editor:
        sid, (first,) = await run_turn(editor, [call(TOOL, timezone="UTC"), {"text": "ok"}])
        assert not is_error(first)
        (server,) = servers(editor)
        server.kill()
        await wait_until(lambda: not alive(server), what="the MCP server to die")
        await wait_until(lambda: [p for p in servers(editor) if p.pid != server.pid], what="a new MCP server process")
        _, (second,) = await run_turn(editor, [call(TOOL, timezone="Asia/Tokyo"), {"text": "ok"}], session_id=sid)
        assert not is_error(second), text_of(second)
        assert json.loads(text_of(second))["timezone"] == "Asia/Tokyo"


def servers(editor) -> list[psutil.Process]:
    return [p for p in mcp_processes(editor.server_pid) if alive(p) and not _cmdline_has(p, "launcher.py")]


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
async def test_no_stdio_server_outlives_the_language_server(workspace, tmp_path, how):
    # like `npx`/`uvx`, the server has a child of its own; this one would survive a closed stdin
    wrapped = {"command": "sh", "args": ["-c", f"sleep 300 & exec {sys.executable} -m mcp_server_time --local-timezone UTC"]}
    settings = {"mcpServers": {"time": wrapped}, "permissions": {"rules": [{"tool": "mcp__time__*", "action": "allow"}]}}
    async with tool_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings=settings, graceful=False) as editor:
        _, (result,) = await run_turn(editor, [call(TOOL, timezone="UTC"), {"text": "ok"}])
        assert not is_error(result)
        children = mcp_processes(editor.server_pid)
        assert [p for p in children if _cmdline_has(p, "300")]  # the server's own child
        assert len(children) >= 3  # the launcher, the server and its child
        os.kill(editor.server_pid, how)
        await wait_until(lambda: not any(alive(p) for p in children), timeout=10, what="the MCP server processes to exit")
