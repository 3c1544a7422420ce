"""MCP in Neovim against the real server and the SDK-built HTTP test server
(tests/mcp/mcp_http_server.py): a server's question answered through
vim.ui.select / vim.ui.input, and :AgentMcpPrompt with its completion."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nvim_harness import SERVER_CMD, Editor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))
from mcp_http_server import HttpMcpServer  # noqa: E402


@pytest.fixture
def http():
    server = HttpMcpServer(legacy=True).start()  # 2025-11-25: questions arrive as elicitation/create
    yield server
    server.stop()


def setup(editor: Editor, url: str, script: list[dict]) -> None:
    settings = {
        "model": {"provider": "scripted", "script": script},
        "mcpServers": {"web": {"type": "http", "url": url, "headers": {"Authorization": "Bearer secret-token"}}},
        "permissions": {"rules": [{"tool": "mcp__web__*", "action": "allow"}]},
    }
    editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": settings})
    editor.edit("a.py")
    editor.wait_attached()


def tool_results(editor: Editor) -> list[str]:
    return editor.lua(
        "local out = {} for _, e in ipairs(T.session().events) do if e.type == 'tool/result' then "
        "local text = '' for _, b in ipairs(e.data.message.content) do text = text .. (b.text or '') end "
        "out[#out + 1] = text end end return out"
    )


def test_a_server_s_question_is_asked_field_by_field(editor: Editor, http) -> None:
    setup(editor, http.url, [{"tools": [{"name": "mcp__web__ask_name", "arguments": {}}]}, {"text": "noted"}])
    editor.lua("T.stub_select('Answer')")
    editor.lua("_G.test_inputs = {} vim.ui.input = function(opts, on_confirm) "
               "table.insert(_G.test_inputs, opts.prompt) on_confirm('Ada') end")
    editor.cmd("AgentAsk who is it for?")
    editor.wait_idle(40000)
    assert tool_results(editor) == ["the name is Ada"]
    (asked,) = editor.lua("return _G.test_selects")
    assert "web asks: Whose name goes on the report?" in asked["prompt"] and asked["labels"] == ["Answer", "Decline"]
    (field,) = editor.lua("return _G.test_inputs")
    assert field == "agent_lsp: web asks — Name: "  # the field's title from the schema


def test_mcp_prompt_completes_and_runs_as_the_next_message(editor: Editor, http) -> None:
    setup(editor, http.url, [])
    assert "web:review" in editor.lua("return vim.fn.getcompletion('AgentMcpPrompt w', 'cmdline')")
    assert editor.lua("return vim.fn.getcompletion('AgentMcpPrompt web:review ', 'cmdline')") == ["focus=", "path="]
    editor.cmd("AgentMcpPrompt web:review src/a.py focus=naming")
    editor.wait_idle(40000)
    (message,) = editor.lua(
        "return vim.tbl_map(function(e) return e.data.message end, vim.tbl_filter(function(e) "
        "return e.type == 'user/message' and e.data.message.source == 'user' end, T.session().events))"
    )
    text = "".join(block.get("text", "") for block in message["content"])
    assert "Review src/a.py, looking at naming." in text
    editor.cmd("AgentMcpPrompt web:review")  # no path: the server's answer names it, nothing is sent
    editor.wait("#T.errors() > 0", what="the error")
    assert "needs path" in editor.errors()[-1]
