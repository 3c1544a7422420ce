"""Signing in to an MCP server that wants OAuth, from Neovim, against the real
server and the SDK-built OAuth test server (tests/mcp/mcp_oauth_server.py):
:AgentMcpAuthorize completes the server, opens the sign-in page through
Neovim's window/showDocument handler (vim.ui.open, stubbed: the test is the
browser), and reports the server ready; :AgentMcp shows it signed in;
:AgentMcpLogout forgets it."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from nvim_harness import SERVER_CMD, Editor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))
from mcp_oauth_server import OAuthMcpServer  # noqa: E402


@pytest.fixture
def oauth():
    server = OAuthMcpServer().start()
    yield server
    server.stop()


def notes(editor: Editor) -> list[str]:
    return editor.lua("return vim.tbl_map(function(n) return n.msg end, _G.test_notes)")


def test_authorize_signs_in_through_the_browser_and_logout_forgets_it(editor: Editor, oauth) -> None:
    settings = {"model": {"provider": "scripted", "script": []}, "mcpServers": {"web": {"type": "http", "url": oauth.url}}}
    editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": settings})
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("_G.opened = {} vim.ui.open = function(url) table.insert(_G.opened, url) "
               "return { wait = function() return { code = 0 } end } end")
    assert editor.lua("return vim.fn.getcompletion('AgentMcpAuthorize ', 'cmdline')") == ["web"]
    assert editor.lua("return vim.fn.getcompletion('AgentMcpLogout ', 'cmdline')") == []

    editor.cmd("AgentMcpAuthorize web")
    editor.wait("#_G.opened > 0", what="the sign-in page to open")
    (url,) = editor.lua("return _G.opened")
    assert url.startswith(f"http://127.0.0.1:{oauth.port}/authorize?")
    assert httpx.get(url, follow_redirects=True, timeout=20).status_code == 200  # the browser
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg:find('ready', 1, true) end)", timeout_ms=40000,
                what="the server to be ready")
    assert any("MCP web" in n and "ready · 1 tool" in n for n in notes(editor)), notes(editor)

    editor.cmd("AgentMcp")
    editor.wait("vim.bo.filetype == 'agent_lsp_mcp'", what="the server list")
    listing = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "signed in" in listing and "not signed in" not in listing
    editor.cmd("close")

    assert editor.lua("return vim.fn.getcompletion('AgentMcpLogout ', 'cmdline')") == ["web"]
    editor.cmd("AgentMcpLogout web")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg:find('signed out', 1, true) end)", what="the sign-out")
    assert editor.lua("return vim.fn.getcompletion('AgentMcpLogout ', 'cmdline')") == []
    assert editor.errors() == []
