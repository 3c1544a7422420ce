"""Fixtures of the Neovim tests: a workspace, a sessions folder, and a started editor.
The harness itself (Editor, start_editor, ...) is nvim_harness.py; tests import it from there."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvim_harness import start_editor, stop_editor


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.py").write_text("x = 1\nprint(x)\n")
    (ws / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    return ws


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sessions"
    d.mkdir()
    return d


@pytest.fixture
def editor(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    ed = start_editor(workspace, tmp_path / "home", monkeypatch)
    yield ed
    stop_editor(ed)
