"""What `pip install .` from a checkout (the README's install) gives a user, and
what the index will give once published: the distribution's name, the licence,
and both commands starting our server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from agent_lsp import __version__

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.slow


def test_the_readmes_install_from_a_checkout_gives_both_commands(tmp_path: Path) -> None:
    """`pip install .` as the README says, in a copy of the checkout (what git tracks)
    and a fresh environment, with the dependencies from the package index."""
    checkout = tmp_path / "checkout"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bin_dir = env_dir / "bin"
    env = {**os.environ, "VIRTUAL_ENV": str(env_dir), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "-q",
                           "--disable-pip-version-check", "."], cwd=checkout, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for command in ("agent-lsp", "agent-language-server"):
        out = subprocess.run([bin_dir / command, "--version"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == f"agent-lsp {__version__}"
    # What the package index will show: the distribution's name, the licence, the import package.
    (dist_info,) = env_dir.glob("lib/python*/site-packages/agent_language_server-*.dist-info")
    metadata = (dist_info / "METADATA").read_text()
    assert "Name: agent-language-server" in metadata and "License-Expression: MIT" in metadata
    assert (dist_info / "licenses" / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    assert next(env_dir.glob("lib/python*/site-packages/agent_lsp/__init__.py"))
    # The installed server starts (its dependencies are all there): one prompt on the scripted model.
    (tmp_path / "ws").mkdir()
    ran = subprocess.run([bin_dir / "agent-lsp", "run", "hello", "--workspace", tmp_path / "ws"], capture_output=True,
                         text=True, timeout=120, env={**env, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c"),
                                                      "AGENT_LSP_SESSIONS_DIR": str(tmp_path / "sessions")})
    assert ran.returncode == 0 and "You said: hello" in ran.stdout, ran.stderr[-2000:]
