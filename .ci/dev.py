#!/usr/bin/env python3
"""Bootstrap and run agent_lsp from a checkout: `python3 .ci/dev.py demo|test|bench|shell`.

On first use it makes a virtual environment in .venv and installs the
project with its dev extras; later runs reuse it and reinstall only when
pyproject.toml changed. Needs nothing but Python 3.11+ with venv.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".agent-lsp-installed"


def _run(cmd: list[str], **kw) -> int:
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kw)


def ensure_venv() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"agent_lsp needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print("Creating .venv …", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("Installing agent_lsp and its dependencies into .venv …", file=sys.stderr)
    pip = [PYTHON, "-m", "pip", "install", "-qq", "--disable-pip-version-check"]
    if _run(pip + ["-e", ".[dev]"]) != 0:
        sys.exit("pip install failed (see above)")
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    what, rest = argv[0], argv[1:]
    if what == "demo":
        ensure_venv()
        return _run([BIN / "agent-lsp", "demo", *rest])
    if what == "test":
        ensure_venv()
        code = 0
        vscode = ROOT / "editors" / "vscode" / "scripts" / "ci.sh"
        if not rest and vscode.exists():
            if shutil.which("npm"):
                code = _run(["bash", vscode])
            else:
                print("npm not found: skipping the VS Code extension tests", file=sys.stderr)
        # pytest last, so its summary is the closing line.
        return _run([PYTHON, "-m", "pytest", *rest]) or code
    if what == "bench":
        ensure_venv()
        code = 0
        for script in sorted((ROOT / "bench").glob("*.py")):
            print(f"\n== {script.name}", flush=True)
            code |= _run([PYTHON, script, *rest])
        return code
    if what == "shell":
        ensure_venv()
        return _run([BIN / "agent-lsp", *rest])
    print(f"unknown command {what!r}; use demo, test, bench or shell", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
