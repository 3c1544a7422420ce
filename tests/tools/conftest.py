"""Fixtures for the tool tests: a workspace on disk and tools over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_fakes import BufferEditor, Ctx, Tools

from agent_lsp.workspace.disk_editor import DiskEditor


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def add(a, b):\n    return a - b\n\n\nprint(add(1, 2))\n")
    (root / "src").mkdir()
    (root / "src" / "util.py").write_text("import os\n\nVALUE = 1\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("secret\n")
    return folder


@pytest.fixture
def ctx() -> Ctx:
    return Ctx()


@pytest.fixture
def disk_tools(ws: Path) -> Tools:
    return Tools(DiskEditor([ws]), [ws])


@pytest.fixture
def buffer_editor(ws: Path) -> BufferEditor:
    return BufferEditor([ws])


@pytest.fixture
def buffer_tools(ws: Path, buffer_editor: BufferEditor) -> Tools:
    return Tools(buffer_editor, [ws])
