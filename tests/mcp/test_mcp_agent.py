"""MCP tools under the real agent loop with the scripted model, against real
MCP servers: `mcp-server-time` and `mcp-server-git` from PyPI (stdio), and a
Streamable HTTP server built with the SDK (tests/mcp/mcp_http_server.py)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.agent.events import only
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.mcp import McpManager, workspace_servers
from agent_lsp.store import SessionStore
from mcp_http_server import HttpMcpServer

TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def call(name: str, **arguments) -> dict:
    return {"tools": [{"name": name, "arguments": arguments}]}


async def start(tmp_path: Path, servers: dict, **options) -> tuple[McpManager, ToolRegistry]:
    configs, problems = workspace_servers(tmp_path, servers, {}, {"TOKEN": "secret-token"})
    registry = ToolRegistry()
    manager = McpManager(configs, problems, root=tmp_path, editor=None, policy=None, registry=registry, **options)
    manager.start()
    await manager.wait_for_first_step()
    return manager, registry


async def run(tmp_path: Path, registry: ToolRegistry, script: list, *, cancel_after=None) -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider(script)
    agent = Agent(SessionStore(tmp_path / "sessions").create(), providers={"scripted": provider}, tools=registry,
                  options=AgentOptions(provider="scripted", model="scripted"))
    agent.followup("go")
    if cancel_after is not None:
        await cancel_after()
        agent.cancel("user")
    await asyncio.wait_for(agent.when_idle(), 20)
    await agent.dispose()
    return agent, provider


def results(agent: Agent) -> list[dict]:
    return [e.data for e in agent.session.events if e.type == "tool/result"]


def text(result: dict) -> str:
    return "".join(b.get("text", "") for b in result["message"]["content"] if b.get("type") == "text")


async def test_a_stdio_server_from_pypi_answers_and_the_next_request_carries_the_result(tmp_path):
    manager, registry = await start(tmp_path, {"time": TIME})
    try:
        assert manager.status()[0]["state"] == "ready"
        spec = next(s for s in registry.specs() if s["name"] == "mcp__time__get_current_time")
        assert spec["parameters"]["required"] == ["timezone"]  # the server's schema, passed through
        agent, provider = await run(tmp_path, registry, [call("mcp__time__get_current_time", timezone="Asia/Tokyo"), {"text": "done"}])
        (result,) = results(agent)
        assert json.loads(text(result))["timezone"] == "Asia/Tokyo"
        second = provider.requests[1]
        carried = [m for m in second.messages if m.get("role") == "tool"]
        assert "Asia/Tokyo" in "".join(b.get("text", "") for b in carried[0]["content"])
        assert "mcp__time__convert_time" in [t["name"] for t in second.tools]
        header = next(e.data for e in agent.session.events if e.type == "request/header")
        assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= {t["name"] for t in header["header"]["tools"]}
    finally:
        await manager.stop()


async def test_arguments_that_break_the_schema_come_back_to_the_model(tmp_path):
    manager, registry = await start(tmp_path, {"time": TIME})
    try:
        agent, _ = await run(tmp_path, registry, [call("mcp__time__get_current_time", timezone=7), {"text": "ok"}])
        (result,) = results(agent)
        assert result["message"]["isError"]
        assert "is not of type 'string'" in text(result)
    finally:
        await manager.stop()


async def test_git_server_reads_the_workspace_repository(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=T"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    manager, registry = await start(tmp_path, {"git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", "${REPO}"]}})
    try:
        assert manager.status()[0]["state"] == "failed"  # ${REPO} is not set: reported by name
        assert "REPO" in manager.status()[0]["reason"]
    finally:
        await manager.stop()
    configs, _ = workspace_servers(tmp_path, {"git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", "${REPO}"]}}, {}, {"REPO": str(repo)})
    registry = ToolRegistry()
    manager = McpManager(configs, root=tmp_path, editor=None, policy=None, registry=registry)
    manager.start()
    await manager.wait_for_first_step()
    try:
        agent, _ = await run(tmp_path, registry, [call("mcp__git__git_log", repo_path=str(repo)), {"text": "ok"}])
        (result,) = results(agent)
        assert "first commit" in text(result), text(result)
    finally:
        await manager.stop()


async def test_http_server_with_bearer_from_env_progress_images_and_cap(tmp_path):
    async with HttpMcpServer() as http:
        servers = {"web": {"type": "http", "url": http.url, "headers": {"Authorization": "Bearer ${TOKEN}"}}}
        manager, registry = await start(tmp_path, servers, max_output_chars=1_000)
        try:
            (status,) = manager.status()
            assert status["state"] == "ready", status
            assert status["protocolVersion"] == "2026-07-28"
            agent, _ = await run(tmp_path, registry, [
                call("mcp__web__count", n=3), call("mcp__web__picture"), call("mcp__web__big", chars=5_000), {"text": "ok"},
            ])
            counted, picture, big = results(agent)
            assert text(counted) == "counted to 3"
            blocks = picture["message"]["content"]
            assert [b["type"] for b in blocks] == ["text", "image", "text", "resource_link"]
            assert blocks[1]["mimeType"] == "image/png" and blocks[3]["uri"] == "file:///docs/readme.md"
            assert len(text(big)) < 1_100 and "4000 characters of output not shown" in text(big)
            assert set(http.seen.authorizations) == {"Bearer secret-token"}
        finally:
            await manager.stop()


async def test_progress_reaches_the_live_events(tmp_path):
    async with HttpMcpServer() as http:
        manager, registry = await start(tmp_path, {"web": {"url": http.url, "headers": {"Authorization": "Bearer secret-token"}}})
        try:
            provider = ScriptedProvider([call("mcp__web__count", n=3), {"text": "ok"}])
            agent = Agent(SessionStore(tmp_path / "s").create(), providers={"scripted": provider}, tools=registry,
                          options=AgentOptions(provider="scripted", model="scripted"))
            seen: list[dict] = []
            agent.subscribe(only("agent/tool/progress", seen.append))
            agent.followup("go")
            await asyncio.wait_for(agent.when_idle(), 20)
            await agent.dispose()
            assert [p["data"]["progress"] for p in seen] == [1, 2, 3]
            assert seen[-1]["data"] == {"progress": 3, "total": 3, "message": "step 3"}
        finally:
            await manager.stop()


async def test_a_wrong_token_fails_by_name_and_a_legacy_server_speaks_2025_11_25(tmp_path):
    async with HttpMcpServer() as modern, HttpMcpServer(legacy=True) as legacy:
        servers = {
            "wrong": {"type": "http", "url": modern.url, "headers": {"Authorization": "Bearer nope"}},
            "old": {"type": "http", "url": legacy.url, "headers": {"Authorization": "Bearer secret-token"}},
        }
        manager, registry = await start(tmp_path, servers)
        try:
            states = {s["name"]: s for s in manager.status()}
            assert states["wrong"]["state"] == "failed" and "401" in states["wrong"]["reason"], states["wrong"]
            assert states["old"]["state"] == "ready" and states["old"]["protocolVersion"] == "2025-11-25"
            agent, _ = await run(tmp_path, registry, [call("mcp__old__echo", text="hi"), {"text": "ok"}])
            assert text(results(agent)[0]) == "echo: hi"
        finally:
            await manager.stop()


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "2025-11-25"])
async def test_a_cancelled_turn_cancels_the_call_on_the_server(tmp_path, legacy):
    async with HttpMcpServer(legacy=legacy) as http:
        manager, registry = await start(tmp_path, {"web": {"url": http.url, "headers": {"Authorization": "Bearer secret-token"}}})
        try:
            async def when_hanging():
                await asyncio.to_thread(http.seen.hang_started.wait, 10)

            agent, provider = await run(tmp_path, registry, [call("mcp__web__hang"), {"text": "never asked"}], cancel_after=when_hanging)
            assert await asyncio.to_thread(http.seen.hang_cancelled.wait, 10)
            assert len(provider.requests) == 1  # the result was dropped; no next step
            ends = [e.data for e in agent.session.events if e.type == "turn/end"]
            assert ends[-1]["reason"]["kind"] == "aborted"
        finally:
            await manager.stop()


async def test_a_call_past_its_timeout_is_cancelled_and_reported(tmp_path):
    async with HttpMcpServer() as http:
        manager, registry = await start(tmp_path, {"web": {"url": http.url, "toolTimeoutSeconds": 0.5,
                                                          "headers": {"Authorization": "Bearer secret-token"}}})
        try:
            agent, _ = await run(tmp_path, registry, [call("mcp__web__hang"), {"text": "ok"}])
            (result,) = results(agent)
            assert result["error"]["code"] == "TIMEOUT"
            assert await asyncio.to_thread(http.seen.hang_cancelled.wait, 10)
        finally:
            await manager.stop()


async def test_a_tool_list_change_is_offered_at_the_next_step(tmp_path):
    async with HttpMcpServer() as http:
        manager, registry = await start(tmp_path, {"web": {"url": http.url, "headers": {"Authorization": "Bearer secret-token"}}})
        try:
            assert "mcp__web__late" not in registry

            def after_grow(request):
                return call("mcp__web__late") if "mcp__web__late" in [t["name"] for t in request.tools] else {"text": "no late tool"}

            async def wait_late():
                for _ in range(200):
                    if "mcp__web__late" in registry:
                        return
                    await asyncio.sleep(0.02)

            provider_script = [call("mcp__web__grow"), after_grow, {"text": "ok"}]
            provider = ScriptedProvider(provider_script)
            agent = Agent(SessionStore(tmp_path / "s").create(), providers={"scripted": provider}, tools=registry,
                          options=AgentOptions(provider="scripted", model="scripted"))
            # the change notification arrives shortly after the call's result: hold the next step until it did
            agent.hooks.register("system-prompt/assemble", lambda p, nxt: _after(wait_late, p, nxt, registry))
            agent.followup("go")
            await asyncio.wait_for(agent.when_idle(), 20)
            await agent.dispose()
            assert text(results(agent)[-1]) == "late and here"
            headers = [e.data for e in agent.session.events if e.type == "request/header"]
            assert headers[-1]["reason"] == "change"  # the log records the new offer
        finally:
            await manager.stop()


async def _after(wait, payload, next_, registry):
    await wait()
    return await next_({**payload, "tools": registry.specs()})


async def test_the_model_lists_and_reads_a_server_s_resources(tmp_path):
    async with HttpMcpServer() as http:
        manager, registry = await start(tmp_path, {"web": {"url": http.url, "headers": {"Authorization": "Bearer secret-token"}}})
        try:
            assert "mcp_read_resource" in registry
            agent, _ = await run(tmp_path, registry, [
                call("mcp_list_resources"), call("mcp_read_resource", server="web", uri="docs://readme"),
                call("mcp_read_resource", server="nope", uri="docs://readme"), {"text": "ok"},
            ])
            listed, read, unknown = results(agent)
            assert "web  docs://readme  readme (text/markdown): How to use the test server" in text(listed)
            assert text(read) == "# Test server\nCall echo."
            assert unknown["message"]["isError"] and "no MCP server named 'nope'" in text(unknown)
        finally:
            await manager.stop()
        assert "mcp_read_resource" not in registry


async def test_the_server_list_reports_each_server_s_state(tmp_path):
    from agent_lsp.config import Settings
    from agent_lsp.mcp import mcp_list
    from agent_lsp.workspace.disk_editor import DiskEditor
    from agent_lsp.workspace.host import WorkspaceHost

    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo-tool": TIME}}))
    settings = Settings.model_validate({
        "sessionsDir": str(tmp_path / "sessions"), "model": {"provider": "scripted"},
        "mcpServers": {"time": TIME, "broken": {"command": ""}},
    })
    asked = []
    editor = DiskEditor([folder], permission_answer=lambda request: asked.append(request) or "deny")
    host = WorkspaceHost(folder, settings=settings, editor=editor, env={"AGENT_LSP_CONFIG": str(tmp_path / "none.toml")})
    try:
        before = {s["name"]: s["state"] for s in mcp_list([host])["servers"]}
        assert before == {"time": "stopped", "repo-tool": "needs-authorization", "broken": "failed"}
        host.new_session()
        await host.mcp_manager().wait_for_first_step()
        listed = {s["name"]: s for s in mcp_list([host])["servers"]}
        assert listed["time"]["state"] == "ready" and listed["time"]["toolCount"] == 2
        assert listed["time"]["workspaceUri"] == host.uri and listed["time"]["source"] == "editor"
        assert listed["repo-tool"]["state"] == "needs-authorization" and "not trusted" in listed["repo-tool"]["reason"]
        assert [r.tool for r in asked] == ["mcp_server"]
        assert "command" in listed["broken"]["reason"]
    finally:
        await host.close()
