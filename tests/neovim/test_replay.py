"""Resuming a long session in Neovim: the plugin pages it (agent/session/replay)
from the real server, draws it progressively, and ends with the chat it showed live."""

from __future__ import annotations

from pathlib import Path

from nvim_harness import start_editor, stop_editor

LONG = ["First answer, streamed one character at a time. " * 40,
        "A second, longer answer with `code` and ✓ marks.\n" * 60]


def test_a_long_session_resumes_page_by_page_as_it_was_live(workspace: Path, sessions_dir: Path, tmp_path: Path,
                                                            monkeypatch) -> None:
    script = [{"reasoning": "think about it " * 30, "text": LONG[0]},
              {"text": "Reading.", "tools": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
              {"text": LONG[1]}]
    first = start_editor(workspace, tmp_path / "home1", monkeypatch)
    try:
        first.setup(script, sessions_dir)
        first.edit("a.py")
        first.wait_attached()
        first.cmd("AgentAsk tell me a lot")
        first.wait_idle()
        first.cmd("AgentAsk read the file, then more")
        first.wait("T.session().turn == 2 and T.session().status == 'idle' and T.chat_text():find('✓') ~= nil",
                   what="the second turn")
        live = first.chat_lines()
        session_id = first.lua("return T.session().id")
    finally:
        stop_editor(first, wait_for_server=True)
    assert "Reading." in live and sum("A second, longer answer" in line for line in live) == 60

    second = start_editor(workspace, tmp_path / "home2", monkeypatch)
    try:
        second.setup([], sessions_dir)
        second.edit("notes.txt")
        second.wait_attached()
        # small pages, and a record of the requests and of the chat after each page
        second.lua(
            """
            local replay = require('agent_lsp.replay')
            replay.PAGE = 4
            _G.drawn = {}
            require('agent_lsp.state').subscribe(function(kind, s)
              if kind == 'reset' or kind == 'events' then
                table.insert(_G.drawn, vim.api.nvim_buf_line_count(T.chat_buf() or 0))
              end
            end)
            """
        )
        second.cmd("AgentResume " + session_id)
        second.wait(f"T.session() ~= nil and T.session().id == '{session_id}' "
                    "and not require('agent_lsp.replay').running(T.session())", what="the replay to finish")
        assert second.chat_lines() == live
        drawn = second.lua("return _G.drawn")
        assert len(drawn) > 5 and drawn[0] < len(live), drawn  # drawn page by page, growing
        assert second.lua("return T.session().turn") == 2
        assert second.errors() == []
    finally:
        stop_editor(second)
