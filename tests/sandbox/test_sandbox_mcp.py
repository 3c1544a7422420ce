"""Stdio MCP servers in the commands' sandbox (`mcp.sandbox`), through the real server:
with "auto" a server reads no secret and writes only in the workspace; with "require"
and no bubblewrap it is not started, and says why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sandbox_places import CANARY, Places, make_places, needs_bwrap
from sandbox_turns import turn
from tools_harness import call, text_of, tool_server

PROBE = {"command": sys.executable, "args": [str(Path(__file__).with_name("mcp_probe_server.py"))]}


@pytest.fixture
def places(tmp_path: Path) -> Places:
    return make_places(tmp_path)


def probe_server(places: Places, mode: str, shell: dict | None = None, **env: str):
    settings = {"mcpServers": {"probe": PROBE}, "mcp": {"sandbox": mode}, "shell": shell or {},
                "permissions": {"rules": [{"tool": "mcp__probe__*", "action": "allow"}]}}
    return tool_server(folders=[places.workspace], sessions_dir=places.root / "sessions", settings=settings,
                       env={"HOME": str(places.home), "TMPDIR": str(places.temp), **env})


@needs_bwrap()
async def test_a_sandboxed_server_reads_no_secret_and_writes_only_in_the_workspace(places: Places):
    inside, outside = places.workspace / "made.txt", places.outside / "escaped.txt"
    async with probe_server(places, "auto") as editor:
        _, (result,) = await turn(editor, [call("mcp__probe__probe", read=str(places.canary),
                                                write=[str(inside), str(outside)])])
    assert text_of(result).splitlines() == ["read: No such file or directory", f"write {inside}: done",
                                            f"write {outside}: Read-only file system"]
    assert inside.read_text() == "probe\n" and not outside.exists()
    assert CANARY not in text_of(result)


async def test_with_require_and_no_bubblewrap_a_server_is_not_started(places: Places):
    async with probe_server(places, "require", {"landlock": False}, PATH=places.path_without_bwrap()) as editor:
        await turn(editor, [{"text": "hello"}], shell={"landlock": False})
        (listed,) = (await editor.request("agent/mcp/list", {"workspaceUri": places.workspace.as_uri()}))["servers"]
    assert listed["state"] != "ready"
    assert 'mcp.sandbox is "require"' in listed["reason"] and "apt install bubblewrap" in listed["reason"]
