"""Skills, rules, agent types, project hooks and `.mcp.json` take effect when
their files change, without a settings change or a restart: at once when the
client watches files (`workspace/didChangeWatchedFiles`), at the next turn
when it does not. A changed `.mcp.json` restarts only the servers whose
entries changed."""

from __future__ import annotations

import json
import sys

import psutil
from lsprotocol import types

from lsp_harness import running_server

TIME_UTC = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
TIME_BERLIN = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "Europe/Berlin"]}
TIME_TOKYO = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "Asia/Tokyo"]}
TIME_YORK = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "America/New_York"]}
SLOW_S = 60.0  # MCP servers start in seconds on a loaded machine


def entered(editor, sid: str) -> list[tuple[str, str]]:
    messages = [e["data"]["message"] for e in editor.events[sid] if e["type"] == "user/message"]
    return [(m.get("source", "user"), "".join(b.get("text", "") for b in m["content"])) for m in messages]


def last_tools(editor, sid: str) -> dict[str, str]:
    header = [e["data"]["header"] for e in editor.events[sid] if e["type"] == "request/header"][-1]
    return {t["name"]: t["description"] for t in header["tools"]}


async def turn(editor, text: str, sid: str | None = None) -> str:
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": text, **({"sessionId": sid} if sid else {})}))["sessionId"]
    await editor.wait_for(lambda: (sid, "idle") in editor.statuses[before:], timeout=SLOW_S, what="the turn to end")
    return sid


def time_server_pids(server_pid: int) -> dict[str, int]:
    """timezone -> pid of each mcp-server-time the language server runs (its launcher's: the oldest)."""
    found = {}
    try:
        children = psutil.Process(server_pid).children(recursive=True)
    except psutil.NoSuchProcess:  # one ended while being listed
        return {}
    for process in children:
        try:
            cmdline = process.cmdline()
            if any("mcp_server_time" in part for part in cmdline) and process.status() != psutil.STATUS_ZOMBIE:
                zone = cmdline[cmdline.index("--local-timezone") + 1]
                found[zone] = min(found.get(zone, process.pid), process.pid)  # the launcher, not its child
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied, ValueError, IndexError):
            continue
    return found


async def servers(editor) -> dict[str, dict]:
    return {s["name"]: s for s in (await editor.request("agent/mcp/list", {}))["servers"]}


async def test_without_file_watching_new_skills_rules_agent_types_and_hooks_apply_at_the_next_turn(tmp_path):
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", env=env) as editor:
        sid = await turn(editor, "first")
        assert "skill" not in last_tools(editor, sid)
        assert editor.registrations == []  # this client cannot watch files: nothing is registered

        skill = workspace / ".agents" / "skills" / "deploy"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploys the site\n---\nRun make deploy.\n")
        (workspace / ".agents" / "rules").mkdir()
        (workspace / ".agents" / "rules" / "style.md").write_text("Indent with tabs.\n")
        (workspace / ".agents" / "agents").mkdir()
        (workspace / ".agents" / "agents" / "reviewer.md").write_text(
            "---\nname: reviewer\ndescription: Reviews a change for bugs\n---\nYou review code.\n")
        hook = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from the project hook"}]}]}}
        (workspace / ".agents" / "settings.json").write_text(json.dumps(hook))

        await turn(editor, "second", sid)
        tools = last_tools(editor, sid)
        assert "- deploy: Deploys the site" in tools["skill"]
        assert "reviewer" in tools["subagent"] and "Reviews a change for bugs" in tools["subagent"]
        texts = entered(editor, sid)
        assert any(source == "rules" and "Indent with tabs." in text for source, text in texts)
        assert any(source == "hook" and "from the project hook" in text for source, text in texts)
        (trust,) = [r for r in editor.permission_requests if r.get("tool") == "project_hooks"]
        assert ".agents/settings.json" in trust["title"]

        listed = await editor.raw_request("agent/skill/list", {})
        assert [s["name"] for s in listed["skills"]] == ["deploy"]
        (skill / "SKILL.md").unlink()
        skill.rmdir()
        assert (await editor.raw_request("agent/skill/list", {}))["skills"] == []


async def test_a_watched_mcp_json_restarts_only_the_servers_whose_entries_changed(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    mcp_json = workspace / ".mcp.json"

    async def saved(config: dict) -> None:
        mcp_json.write_text(json.dumps({"mcpServers": config}))
        editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=mcp_json.as_uri(), type=types.FileChangeType.Changed)]))

    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", watch_files=True) as editor:
        (registration,) = await editor.wait_for(lambda: editor.registrations, what="the file watchers registered")
        assert registration["method"] == "workspace/didChangeWatchedFiles"
        globs = [w["globPattern"] for w in registration["registerOptions"]["watchers"]]
        assert "**/.mcp.json" in globs and "**/.agents/**" in globs and "**/.claude/**" in globs

        await turn(editor, "a session before any server is configured")
        await saved({"utc": TIME_UTC, "berlin": TIME_BERLIN})
        await editor.wait_for(lambda: set(time_server_pids(editor.server_pid)) == {"UTC", "Europe/Berlin"},
                              timeout=SLOW_S, what="both servers running")
        first = time_server_pids(editor.server_pid)

        # berlin moves to Tokyo, utc stays, a new one is added: no request is sent, the notification alone acts
        asked = len(editor.permission_requests)
        await saved({"utc": TIME_UTC, "berlin": TIME_TOKYO, "york": TIME_YORK})
        await editor.wait_for(lambda: {"Asia/Tokyo", "America/New_York"} <= set(time_server_pids(editor.server_pid)), timeout=SLOW_S, what="berlin restarted, york started")
        await editor.wait_for(lambda: "Europe/Berlin" not in time_server_pids(editor.server_pid), timeout=SLOW_S, what="the old one stopped")
        new_trust = [r["title"] for r in editor.permission_requests[asked:] if r.get("tool") == "mcp_server"]
        assert sorted(new_trust) == sorted([f"Start the MCP server '{name}' from .mcp.json of ws?" for name in ("berlin", "york")])
        assert time_server_pids(editor.server_pid)["UTC"] == first["UTC"]  # unchanged entry: same process

        await saved({"berlin": TIME_TOKYO})
        await editor.wait_for(lambda: "UTC" not in time_server_pids(editor.server_pid), timeout=SLOW_S, what="utc stopped")
        assert set(await servers(editor)) == {"berlin"}
