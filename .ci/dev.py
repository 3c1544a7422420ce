#!/usr/bin/env python3
"""Bootstrap and run agent_lsp from a checkout: `python3 .ci/dev.py demo|test|bench|shell`.

On first use it makes a virtual environment in .venv and installs the
project with its dev extras; later runs reuse it and reinstall only when
pyproject.toml changed. Needs nothing but Python 3.11+ with venv.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import venv
import xml.etree.ElementTree as ET
from dataclasses import dataclass
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
    # A .venv made before the distribution was renamed holds it as agent-lsp.
    _run([PYTHON, "-m", "pip", "uninstall", "-qq", "-y", "agent-lsp"], stderr=subprocess.DEVNULL)
    if _run(pip + ["-e", ".[dev]"]) != 0:
        sys.exit("pip install failed (see above)")
    STAMP.write_text(wanted)


ACP_NODE = ROOT / "tests" / "acp" / "node"


def ensure_acp_client() -> None:
    """The official ACP TypeScript SDK for tests/acp (its client drives `agent-lsp acp`),
    from tests/acp/node's lockfile; without npm those tests skip and say why."""
    stamp = ACP_NODE / "node_modules" / ".agent-lsp-installed"
    wanted = hashlib.sha256((ACP_NODE / "package-lock.json").read_bytes()).hexdigest()
    if not shutil.which("npm") or (stamp.exists() and stamp.read_text() == wanted):
        return
    print("Installing the ACP TypeScript SDK into tests/acp/node …", file=sys.stderr)
    npm = ["npm", "ci", "--no-audit", "--no-fund", "--silent"]
    if subprocess.call(npm, cwd=ACP_NODE) == 0:
        stamp.write_text(wanted)
    else:
        print("npm ci in tests/acp/node failed; the ACP TypeScript client tests will skip", file=sys.stderr)


# -- `test` with no arguments: every part, then one summary ------------------

VSCODE = ROOT / "editors" / "vscode"
LOGS = VENV / "test-logs"
SKIP = 77  # the exit code a part uses to say "cannot run here" (it prints "skip: why")


@dataclass
class Part:
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    # A part that did not run at all is "skipped" or "failed" as a whole, with why.
    whole: str = ""
    why: str = ""

    def line(self) -> str:
        if self.whole:
            return f"{self.name:24} {self.whole}: {self.why}"
        counts = f"{self.passed} passed, {self.failed} failed"
        if self.skipped:
            counts += f", {self.skipped} skipped"
        return f"{self.name:24} {counts}" + (f" (skipped: {self.why})" if self.why else "")


def _pytest_parts(junit: Path) -> list[Part]:
    """Counts per part from pytest's JUnit XML: tests/neovim is Neovim,
    tests/editors (eglot) is Emacs, the rest is Python; with the skip reasons."""
    parts = {name: Part(name) for name in ("Python", "Neovim", "Emacs")}
    reasons: dict[str, set[str]] = {name: set() for name in parts}
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "")
        name = "Neovim" if module.startswith("tests.neovim") else "Emacs" if module.startswith("tests.editors.") else "Python"
        part = parts[name]
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            part.failed += 1
        elif skipped is not None:
            part.skipped += 1
            reasons[name].add(skipped.get("message", "").removeprefix("Skipped: ").strip())
        else:
            part.passed += 1
    for name, part in parts.items():
        part.why = "; ".join(sorted(reasons[name]))
        if part.skipped and not (part.passed or part.failed):
            part.whole = "skipped"
    return list(parts.values())


def _run_logged(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Runs a part with its output in a log file (the screen stays readable)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        code = subprocess.call([str(c) for c in cmd], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    return code, log.read_text(errors="replace")


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _vscode_parts() -> list[Part]:
    unit, editor = Part("VS Code unit"), Part("VS Code in code-server")
    if not shutil.which("npm"):
        for part in (unit, editor):
            part.whole, part.why = "skipped", "npm not found (Node 20+ with npm runs the extension's tests)"
        return [unit, editor]
    script = VSCODE / "scripts" / "ci.sh"
    # The agent's own language servers are tested in the Python part; here, as in
    # the rest of the suite, they stay off, and sandboxed commands are asked about
    # like any command (tests/conftest.py says why).
    env = {**os.environ, "AGENT_LSP_PYTHON": str(PYTHON), "AGENT_LSP_LANGUAGE_SERVERS": "false",
           "AGENT_LSP_SANDBOXED_COMMANDS": "ask"}

    print("== VS Code unit tests (log: %s)" % (LOGS / "vscode-unit.log"), flush=True)
    code, out = _run_logged(["bash", script, "unit"], LOGS / "vscode-unit.log", env)
    found = {key: int(n) for key, n in re.findall(r"^# (pass|fail|skipped) (\d+)$", out, re.M)}
    unit.passed, unit.failed, unit.skipped = found.get("pass", 0), found.get("fail", 0), found.get("skipped", 0)
    if code != 0:
        print(_tail(out), file=sys.stderr)
        if not unit.failed:
            unit.whole, unit.why = "failed", f"exit code {code}, see {LOGS / 'vscode-unit.log'}"
        editor.whole, editor.why = "skipped", "the unit part failed"
        return [unit, editor]

    print("== VS Code in code-server (log: %s)" % (LOGS / "vscode-editor.log"), flush=True)
    code, out = _run_logged(["bash", script, "editor"], LOGS / "vscode-editor.log", env)
    if code == SKIP:
        editor.whole = "skipped"
        editor.why = next((l[len("skip: "):] for l in out.splitlines() if l.startswith("skip: ")), "no reason given")
        return [unit, editor]
    editor.passed = len(re.findall(r"^\s*[\d.]+s ok  ", out, re.M)) + len(re.findall(r"PASS (?:ui smoke|first run|daily use)", out))
    editor.failed = len(re.findall(r"^\s*[\d.]+s FAIL ", out, re.M))
    if code != 0:
        print(_tail(out), file=sys.stderr)
        if not editor.failed:
            editor.whole, editor.why = "failed", f"exit code {code}, see {LOGS / 'vscode-editor.log'}"
    return [unit, editor]


def _workers() -> list[str]:
    """pytest-xdist's options: a worker per core, up to four (the tests mostly wait on
    the processes they start, and a file's tests stay on one worker: they share
    module fixtures and servers). One core: none."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(cores, 4)
    return ["-n", str(workers), "--dist", "loadfile"] if workers > 1 else []


def test_everything() -> int:
    """pytest (Python, Neovim, Emacs), then the VS Code extension; one summary
    at the end, a line per part, and a total line; non-zero when a part failed."""
    junit = LOGS / "pytest.xml"
    junit.unlink(missing_ok=True)
    code = _run([PYTHON, "-m", "pytest", f"--junitxml={junit}", *_workers()])
    python, neovim, emacs = _pytest_parts(junit) if junit.exists() else (Part("Python"), Part("Neovim"), Part("Emacs"))
    if code != 0 and not (python.failed or neovim.failed or emacs.failed):
        python.whole, python.why = "failed", f"pytest exited {code}"
    parts = [python, *_vscode_parts(), neovim, emacs]

    print("\n== summary")
    for part in parts:
        print(part.line())
    failed = sum(p.failed or p.whole == "failed" for p in parts)
    skipped = sum(p.skipped or p.whole == "skipped" for p in parts)
    print(f"total: {sum(p.passed for p in parts)} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


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
        ensure_acp_client()
        if rest:  # any pytest arguments: just pytest
            return _run([PYTHON, "-m", "pytest", *rest])
        return test_everything()
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
