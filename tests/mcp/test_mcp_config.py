"""Which MCP servers a workspace gets from config.toml, .mcp.json and the editor."""

from __future__ import annotations

import json

from agent_lsp.config.layers import SettingsLayers
from agent_lsp.mcp.config import expand, user_file_servers, workspace_servers


def by_name(servers):
    return {s.name: s for s in servers}


def test_precedence_user_file_then_project_then_editor(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[mcpServers.a]\ncommand = "from-file"\n[mcpServers.b]\ncommand = "from-file"\n[mcpServers.c]\ncommand = "from-file"\n')
    env = {"AGENT_LSP_CONFIG": str(config)}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"b": {"command": "from-project"}, "c": {"command": "from-project"}}}))
    layers = SettingsLayers(env=env, config_file=config)
    layers.set_layer("workspace", {"mcpServers": {"c": {"command": "from-editor"}}})
    servers, problems = workspace_servers(tmp_path, layers.current.mcp_servers, user_file_servers(env), env)
    assert problems == []
    got = by_name(servers)
    assert {n: (s.command, s.source) for n, s in got.items()} == {
        "a": ("from-file", "user"), "b": ("from-project", "project"), "c": ("from-editor", "editor"),
    }
    assert got["b"].is_project and not got["c"].is_project


def test_claude_code_format_with_variables(tmp_path):
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "db": {"command": "${HOME}/bin/db-mcp", "args": ["--dsn", "${DSN:-sqlite://x}"], "env": {"KEY": "${KEY}"}},
        "web": {"type": "http", "url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "bearer": {"url": "https://h/mcp", "bearerTokenEnvVar": "TOKEN"},
    }}))
    env = {"HOME": "/home/u", "KEY": "k", "HOST": "example.com", "TOKEN": "t0k"}
    servers, problems = workspace_servers(tmp_path, {}, {}, env)
    assert problems == []
    got = by_name(servers)
    assert got["db"].command == "/home/u/bin/db-mcp" and got["db"].args == ("--dsn", "sqlite://x") and got["db"].env == {"KEY": "k"}
    assert got["db"].shown == "${HOME}/bin/db-mcp --dsn ${DSN:-sqlite://x}"  # what the user trusts, no secrets expanded
    assert got["web"].transport == "http" and got["web"].url == "https://example.com/mcp"
    assert got["web"].headers == {"Authorization": "Bearer t0k"}
    assert got["bearer"].headers == {"Authorization": "Bearer t0k"}


def test_bad_entries_are_reported_by_name_and_the_others_kept(tmp_path):
    servers, problems = workspace_servers(tmp_path, {
        "ok": {"command": "x"},
        "no-command": {"args": ["a"]},
        "old": {"type": "sse", "url": "http://h/sse"},
        "args": {"command": "x", "args": "not a list"},
        "unset": {"command": "x", "env": {"K": "${NOPE}"}},
        "bad name": {"command": "x"},
        "off": {"command": "x", "enabled": False},
        "timeout": {"command": "x", "toolTimeoutSeconds": -1},
    }, {}, {})
    assert [s.name for s in servers] == ["ok"]
    reasons = {p.name: p.reason for p in problems}
    assert set(reasons) == {"no-command", "old", "args", "unset", "bad name", "timeout"}
    assert "command" in reasons["no-command"] and "SSE" in reasons["old"] and "NOPE" in reasons["unset"]
    assert str(problems[0]).startswith("MCP server 'no-command' (editor): ")


def test_an_unreadable_project_file_is_one_problem(tmp_path):
    (tmp_path / ".mcp.json").write_text("{not json")
    servers, problems = workspace_servers(tmp_path, {"ok": {"command": "x"}}, {}, {})
    assert [s.name for s in servers] == ["ok"]
    assert len(problems) == 1 and ".mcp.json" in problems[0].reason


def test_expansion_default_and_empty():
    assert expand("${A:-d}", {"A": ""}) == "d"
    assert expand("${A}", {"A": ""}) == ""
    assert expand("a${B}c", {"B": "b"}) == "abc"
