"""The built wheel is what `pip install agent-language-server` gives a user:
the distribution's name, the licence, and both commands starting our server."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from agent_lsp import __version__

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--disable-pip-version-check", "-w", out, ROOT],
        check=True, capture_output=True, timeout=300,
    )
    (built,) = out.glob("*.whl")
    return built


def test_the_wheel_is_named_agent_language_server_and_carries_the_licence(wheel: Path) -> None:
    assert wheel.name.startswith("agent_language_server-")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        licence = archive.read(next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))).decode()
    assert "Name: agent-language-server" in metadata
    assert "License-Expression: MIT" in metadata
    assert licence == (ROOT / "LICENSE").read_text()
    assert "Permission is hereby granted" in licence
    assert any(n.startswith("agent_lsp/") for n in names)  # the import package keeps its name


def test_both_commands_of_the_installed_wheel_are_our_server(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q",
         "--disable-pip-version-check", wheel],
        check=True, capture_output=True, timeout=300,
    )
    for command in ("agent-lsp", "agent-language-server"):
        out = subprocess.run([env_dir / "bin" / command, "--version"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == f"agent-lsp {__version__}"
