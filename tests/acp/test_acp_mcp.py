"""MCP servers the ACP client passes in session/new and session/load, through the real
`agent-lsp acp` process and a real MCP server from PyPI (mcp-server-time)."""

from __future__ import annotations

import asyncio
import json
import sys
import time

import acp
import psutil
import pytest
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer as AcpHttpServer, McpServerStdio, SseMcpServer

from acp_harness import AcpTestClient, acp_agent
from mcp_http_server import HttpMcpServer

TURN_S = 60.0  # the first request waits for the MCP server's cold start (seconds on a loaded machine)
TOOL = "mcp__time__get_current_time"
CALL_TIME = {"tools": [{"name": TOOL, "arguments": {"timezone": "Europe/Lisbon"}}]}


def time_server(zone: str = "UTC") -> McpServerStdio:
    return McpServerStdio(name="time", command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", zone],
                          env=[EnvVariable(name="TZ", value=zone)])


def time_processes(agent_pid: int) -> list[psutil.Process]:
    try:
        children = psutil.Process(agent_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for process in children:
        try:
            if any("mcp_server_time" in part for part in process.cmdline()):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            continue
    return found


def gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def tool_results(client: AcpTestClient, sid: str) -> list:
    return [u for u in client.of(sid) if u.session_update == "tool_call_update" and u.status in ("completed", "failed")]


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_a_server_passed_in_session_new_serves_that_session_and_stops_with_the_process(tmp_path, workspace):
    client = AcpTestClient(answers=["allow_once"])
    script = [CALL_TIME, {"text": "It is late in Lisbon."}, CALL_TIME, {"text": "no clock here"}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        reply = await conn.new_session(cwd=str(workspace), mcp_servers=[time_server()])
        sid = reply.session_id
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("time?")]), TURN_S)
        assert answer.stop_reason == "end_turn"
        (result,) = tool_results(client, sid)
        assert result.status == "completed"
        seen = json.loads(result.content[-1].content.text)  # the text the model got as the tool's result
        assert seen["timezone"] == "Europe/Lisbon"
        assert client.text(sid) == "It is late in Lisbon."
        # a client server is the user's own: no trust question, only the tool's permission
        (asked, _), = client.permission_requests
        assert asked.tool_call_id == result.tool_call_id and "get_current_time" in asked.title
        running = time_processes(conn.process.pid)
        assert running

        # another session of the same folder did not get this session's servers
        other = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=other, prompt=[acp.text_block("time?")]), TURN_S)
        (refused,) = tool_results(client, other)
        assert refused.status == "failed" and TOOL in refused.content[-1].content.text

    deadline = time.monotonic() + 10
    while not all(gone(p) for p in running) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert all(gone(p) for p in running), "the MCP server outlived the ACP process"


async def test_a_load_runs_the_servers_the_client_passes_then(tmp_path, workspace):
    sessions = tmp_path / "sessions"
    client = AcpTestClient()
    async with acp_agent(client, sessions, []) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id

    loaded = AcpTestClient(answers=["allow_once"])
    async with acp_agent(loaded, sessions, [CALL_TIME, {"text": "done"}]) as conn:
        await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[time_server()]), 30)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("time?")]), TURN_S)
        (result,) = tool_results(loaded, sid)
        assert result.status == "completed" and "Europe/Lisbon" in result.content[-1].content.text


async def commands_of(client: AcpTestClient, sid: str, wanted: str) -> dict:
    """The latest command list once it offers `wanted` (MCP prompts come once the servers are ready)."""
    for _ in range(int(TURN_S * 10)):
        updates = [u for u in client.of(sid) if u.session_update == "available_commands_update"]
        if updates and any(c.name == wanted for c in updates[-1].available_commands):
            return {c.name: c for c in updates[-1].available_commands}
        await asyncio.sleep(0.1)
    raise AssertionError(f"{wanted} was never offered")


async def test_an_http_server_s_tools_and_prompts_serve_the_session_as_slash_commands(tmp_path, workspace):
    client = AcpTestClient()
    echo = {"tools": [{"name": "mcp__web__echo", "arguments": {"text": "hi"}}]}
    allow_web = {"permissions": {"rules": [{"tool": "mcp__web__*", "action": "allow"}]}}
    async with HttpMcpServer() as http, acp_agent(client, tmp_path / "sessions", [echo, {"text": "echoed"}],
                                                    **allow_web) as conn:
        web = AcpHttpServer(type="http", name="web", url=http.url,
                            headers=[HttpHeader(name="Authorization", value="Bearer secret-token")])
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[web])).session_id
        commands = await commands_of(client, sid, "web:review")
        review = commands["web:review"]
        assert review.description == "Review one file" and review.input.root.hint == "<path> [focus=…]"
        assert {"compact", "revert", "new"} <= set(commands)
        assert "Bearer secret-token" in http.seen.authorizations  # the client's header reached the server

        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("echo")]), TURN_S)
        (result,) = tool_results(client, sid)
        assert result.status == "completed" and "echo: hi" in result.content[-1].content.text

        # the command's text fills the prompt's arguments; the filled-in prompt is the user's message
        before = client.text(sid)
        answer = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[acp.text_block("/web:review src/a.py focus=tests")]), TURN_S)
        assert answer.stop_reason == "end_turn"
        said = client.text(sid)[len(before):]  # the script is used up: the model says what it got
        assert "You said:" in said and "(assistant) I will read the file first." in said
        assert "Review src/a.py, looking at tests." in said

        before = client.text(sid)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("/web:review")]), TURN_S)
        assert client.text(sid)[len(before):] == "Could not run /web:review: arguments: prompt web:review needs path"


async def test_a_server_the_face_cannot_run_is_a_readable_error(tmp_path, workspace):
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", []) as conn:
        sse = SseMcpServer(type="sse", name="events", url="http://127.0.0.1:9/sse", headers=[HttpHeader(name="a", value="b")])
        with pytest.raises(acp.RequestError) as refused:
            await conn.new_session(cwd=str(workspace), mcp_servers=[sse])
        assert refused.value.code == -32602 and "'events'" in str(refused.value) and "sse" in str(refused.value)
        bad_name = McpServerStdio(name="my server", command="true", args=[], env=[])
        with pytest.raises(acp.RequestError, match="'my server'"):
            await conn.new_session(cwd=str(workspace), mcp_servers=[bad_name])
