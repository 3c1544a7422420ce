"""What `agent-lsp run` prints shows control characters and bidi overrides
instead of handing them to the terminal: the model's text, a tool call's
arguments, a command's output, a tool's error and an MCP server's tool
result and error, each carrying OSC 52 (sets
the terminal's clipboard), ESC[2J (clears the screen), BEL, NUL, a carriage
return and a right-to-left override."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_helpers import agent_lsp, clean_env

HOSTILE = "\x1b]52;c;aGk=\x07|\x1b[2J|\x00|\u202eevil|\rhidden|\x9b"
SHOWN = "␛]52;c;aGk=␇|␛[2J|␀|<U+202E>evil|␍hidden|<U+009B>"
RAW = ("\x1b", "\x07", "\x00", "\u202e", "\r", "\x9b")

MCP_SERVER = f'''
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("hostile")


@server.tool()
def fetch() -> str:
    """Returns a page."""
    return "page:" + {HOSTILE!r}


@server.tool()
def broken() -> str:
    """Fails."""
    raise ToolError("boom:" + {HOSTILE!r})


server.run()
'''

def test_run_shows_control_characters_escaped(tmp_path: Path, workspace: Path):
    (tmp_path / "hostile_mcp.py").write_text(MCP_SERVER, encoding="utf-8")
    script = [
        {"text": f"model:{HOSTILE}", "tools": [
            {"name": "run_command", "arguments": {"command": "printf 'output:\\033]52;c;eA==\\007|\\033[2J|\\342\\200\\256x\\n'"}},
            {"name": "read_file", "arguments": {"path": "missing\x1b]52;c;aGk=\x07\u202e.py"}},
            {"name": "mcp__hostile__fetch", "arguments": {}},
            {"name": "mcp__hostile__broken", "arguments": {}},
        ]},
        {"text": "done"},
    ]
    settings = {"model": {"provider": "scripted", "script": script},
                "mcpServers": {"hostile": {"command": sys.executable, "args": [str(tmp_path / "hostile_mcp.py")]}}}
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    done = agent_lsp(["run", "go", "-w", str(workspace), "--settings", json.dumps(settings), "--yes"], env, timeout=120)
    assert done.returncode == 0, done.stderr

    printed = done.stdout + done.stderr
    assert f"model:{SHOWN}" in done.stdout
    assert "output:␛]52;c;eA==␇|␛[2J|<U+202E>x" in done.stdout  # the command's live output
    assert "→ read_file \"missing\\x1b]52;c;aGk=\\x07\\u202e.py\"" in done.stdout  # the call's line
    assert "\"missing\\x1b]52;c;aGk=\\x07\\u202e.py\"" in done.stdout.split("✗ ", 1)[1]  # its error's line
    assert "boom:␛]52;c;aGk=␇|␛[2J|␀|<U+202E>evil|" in done.stdout  # the failed MCP call's line (its first)
    assert [char for char in RAW if char in printed] == []
    # the session log keeps what the model and the tools said as it was: there it is data
    (log,) = (tmp_path / "sessions").rglob("*.jsonl")
    stored = list(_strings([json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]))
    assert any(f"model:{HOSTILE}" in text for text in stored)
    assert any("output:\x1b]52;c;eA==\x07|\x1b[2J|\u202ex" in text for text in stored)
    assert any(f"page:{HOSTILE}" in text for text in stored)  # the MCP result, as the model got it


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_a_terminal_without_unicode_gets_ascii_escapes(tmp_path: Path, workspace: Path):
    settings = {"model": {"provider": "scripted", "script": [{"text": f"model:{HOSTILE}"}]}}
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"), PYTHONIOENCODING="ascii")
    done = agent_lsp(["run", "go", "-w", str(workspace), "--settings", json.dumps(settings)], env)
    assert done.returncode == 0, done.stderr
    assert "model:\\x1b]52;c;aGk=\\x07|\\x1b[2J|\\x00|<U+202E>evil|\\x0dhidden|\\x9b" in done.stdout


def test_config_show_shows_a_projects_control_characters_escaped(tmp_path: Path, workspace: Path):
    servers = {"mcpServers": {"tool": {"command": "run\x1b]52;c;aGk=\x07\x1b[2J", "args": ["\u202eevil"]}}}
    (workspace / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    done = agent_lsp(["config", "show", "-w", str(workspace)], clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "run␛]52;c;aGk=␇␛[2J <U+202E>evil" in done.stdout
    assert [char for char in RAW if char in done.stdout] == []
