"""A session asked for as Neovim starts (`nvim a.py +AgentNew`) is answered
before the server has loaded, with the settings Neovim answers the server's
`workspace/configuration` with, and then works as any other: on the first start
after an install (no start-up cache yet) as on later ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvim_harness import start_editor, stop_editor

EARLY_SESSION = "answered agent/session/new before the server loaded"
EARLY_SETTINGS = "applied the settings asked for before the server loaded"


def test_a_session_asked_for_at_start_is_answered_before_the_server_has_loaded(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    for start in ("is the first", "has the start-up cache"):
        editor = start_editor(workspace, home, monkeypatch)
        try:
            editor.setup([{"text": f"Answered; the start {start}."}], sessions_dir=tmp_path / "sessions",
                         cmd_env={"AGENT_LSP_LOG_LEVEL": "debug"})
            editor.edit("a.py")
            editor.cmd("AgentNew")  # before the client has initialized: sent once it has
            editor.wait("T.session() ~= nil", 40000, "the new session")
            editor.cmd("AgentAsk hello")
            editor.wait_idle()
            assert f"Answered; the start {start}." in editor.chat_text()
            assert editor.errors() == []
        finally:
            stop_editor(editor, wait_for_server=True)
    log = (home / "xdg_state_home" / "nvim" / "lsp.log").read_text(errors="replace")
    assert log.count(EARLY_SESSION) == 2, log[-3000:]  # both starts
    assert log.count(EARLY_SETTINGS) >= 1  # asked again at Neovim's didChangeConfiguration, as the server does
