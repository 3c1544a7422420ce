"""MCP configuration problems are printed where the user runs the command:
`agent-lsp run` and `chat` print one line per problem on stderr at the
default log level, and `agent-lsp config show` lists them, a server whose
program does not exist included."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_helpers import agent_lsp, clean_env

MISTAKES = {
    "nocommand": {"args": ["serve"]},
    "oddtype": {"type": "websocket", "url": "http://127.0.0.1:9/mcp"},
    "unsetvar": {"command": sys.executable, "env": {"TOKEN": "${AGENT_LSP_TEST_NEVER_SET}"}},
    "noprogram": {"command": "agent-lsp-test-no-such-program", "args": ["--stdio"]},
    "nopath": {"command": "./bin/no-such-server"},
    "fine": {"command": sys.executable, "args": ["-c", "pass"]},
}

EXPECTED = [
    "agent-lsp: MCP server 'nocommand' (project): a stdio server needs a \"command\" (a string)",
    "agent-lsp: MCP server 'oddtype' (project): unknown type 'websocket' (expected \"stdio\" or \"http\")",
    "agent-lsp: MCP server 'unsetvar' (project): environment variable AGENT_LSP_TEST_NEVER_SET is not set "
    "(used as ${AGENT_LSP_TEST_NEVER_SET})",
    "agent-lsp: MCP server 'noprogram' (project): the program 'agent-lsp-test-no-such-program' was not found on PATH",
    "agent-lsp: MCP server 'nopath' (project): the program './bin/no-such-server' was not found",
]


def _workspace(tmp_path: Path, mcp_json: str) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".mcp.json").write_text(mcp_json, encoding="utf-8")
    return workspace


def test_run_and_chat_print_each_mcp_problem_before_the_answer(tmp_path: Path):
    workspace = _workspace(tmp_path, json.dumps({"mcpServers": MISTAKES}))
    env = clean_env(tmp_path)

    run = agent_lsp(["run", "hello", "--deny", "-w", str(workspace)], env)
    assert run.returncode == 0, run.stderr
    assert "You said: hello" in run.stdout
    lines = run.stderr.splitlines()
    for expected in EXPECTED:
        assert expected in lines, run.stderr
    assert not [line for line in lines if line.startswith("agent-lsp: MCP server 'fine'")]

    chat = agent_lsp(["chat", "--deny", "-w", str(workspace)], env, input="hi there\n/exit\n")
    assert chat.returncode == 0, chat.stderr
    assert [line for line in chat.stderr.splitlines() if line.startswith("agent-lsp: MCP server")] == EXPECTED
    assert chat.stderr.index("MCP server 'nocommand'") < chat.stderr.index("chatting in")


def test_a_mcp_json_that_does_not_parse_is_named_with_the_place(tmp_path: Path):
    workspace = _workspace(tmp_path, '{"mcpServers": {"git": {"command": "uvx"},}}')
    done = agent_lsp(["run", "hello", "--deny", "-w", str(workspace)], clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if ".mcp.json" in line]
    assert f"cannot read {workspace / '.mcp.json'}" in line and "line 1 column" in line


def test_a_user_server_whose_program_does_not_exist_is_reported(tmp_path: Path):
    config = tmp_path / "config" / "agent-lsp" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[mcpServers.git]\ncommand = "agent-lsp-test-no-such-uvx"\nargs = ["mcp-server-git"]\n',
                      encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    done = agent_lsp(["run", "hello", "-w", str(workspace)], clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert ("agent-lsp: MCP server 'git' (user): the program 'agent-lsp-test-no-such-uvx' was not found on PATH"
            in done.stderr.splitlines())


def test_config_show_lists_a_server_whose_program_does_not_exist_as_a_problem(tmp_path: Path):
    workspace = _workspace(tmp_path, json.dumps({"mcpServers": MISTAKES}))
    env = clean_env(tmp_path)

    done = agent_lsp(["config", "show", "--json", "-w", str(workspace)], env)
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert [f"agent-lsp: {p}" for p in view["problems"]] == EXPECTED
    assert {e["name"] for e in view["mcp_servers"]} == {"noprogram", "nopath", "fine"}

    text = agent_lsp(["config", "show", "-w", str(workspace)], env)
    assert "  MCP server 'noprogram' (project): the program 'agent-lsp-test-no-such-program' was not found on PATH" \
        in text.stdout.splitlines()
