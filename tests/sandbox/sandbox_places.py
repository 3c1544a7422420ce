"""A workspace, a temp folder, a fake home with secrets and a folder outside all of them,
for the sandbox's tests; and whether bubblewrap works on this machine."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_lsp.sandbox import SandboxPolicy, sandbox_availability

CANARY = "CANARY-PRIVATE-KEY-0123456789"


def needs_bwrap():
    """Skip where bubblewrap is missing or cannot make a sandbox (CI installs it)."""
    if not sys.platform.startswith("linux"):
        return pytest.mark.skip(reason="bubblewrap is Linux only")
    found = sandbox_availability()
    return pytest.mark.skipif(not found.works, reason=f"no sandbox here: {found.why_not}")


@dataclass
class Places:
    root: Path
    workspace: Path
    temp: Path
    home: Path
    outside: Path

    @property
    def canary(self) -> Path:
        return self.home / ".ssh" / "id_rsa"

    def env(self) -> dict[str, str]:
        return {**os.environ, "HOME": str(self.home), "TMPDIR": str(self.temp)}

    def policy(self, **overrides) -> SandboxPolicy:
        values = dict(roots=(self.workspace,), temp_dirs=(self.temp,), home=self.home)
        values.update(overrides)
        return SandboxPolicy(**values)

    def path_without_bwrap(self) -> str:
        """A PATH with the tools the tests run, and no bubblewrap."""
        folder = self.root / "bin-without-bwrap"
        folder.mkdir(exist_ok=True)
        for tool in ("bash", "sh", "ls", "cat", "git", "sleep", "env", "true", "echo", "pwd", "touch", "rm"):
            found = shutil.which(tool)
            if found and not (folder / tool).exists():
                (folder / tool).symlink_to(found)
        return str(folder)


def make_places(root: Path) -> Places:
    places = Places(root, root / "ws", root / "tmp", root / "home", root / "outside")
    for folder in (places.workspace, places.temp, places.home / ".ssh", places.outside):
        folder.mkdir(parents=True, exist_ok=True)
    places.canary.write_text(CANARY + "\n")
    (places.home / ".aws").mkdir(exist_ok=True)
    (places.home / ".aws" / "credentials").write_text(CANARY + "\n")
    (places.home / "notes.txt").write_text("private notes\n")
    (places.outside / "file.txt").write_text("outside\n")
    return places
