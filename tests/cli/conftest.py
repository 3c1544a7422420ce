"""Fixtures of the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import DEMO_WORKSPACE


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of the demo's sample project (stats.py with its bug, README.md)."""
    folder = tmp_path / "project"
    folder.mkdir()
    for source in DEMO_WORKSPACE.iterdir():
        if source.is_file():
            (folder / source.name).write_bytes(source.read_bytes())
    return folder
