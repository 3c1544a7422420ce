"""Helpers for running `agent-lsp` as a subprocess, the way a user does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DEMO_WORKSPACE = Path(__file__).parents[2] / "agent_lsp" / "cli" / "demo_workspace"


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No API keys, no AGENT_LSP_* settings, and config/data dirs in tmp_path:
    the scripted model, and nothing read from or written to the real home."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL") and not k.startswith("AGENT_LSP_")
    }
    for switch in ("AGENT_LSP_LANGUAGE_SERVERS", "AGENT_LSP_SANDBOXED_COMMANDS"):  # the suite's switches (tests/conftest.py)
        if switch in os.environ:
            env[switch] = os.environ[switch]
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        NO_COLOR="1",
        PYTHONIOENCODING="utf-8",
    )
    env.update(extra)
    return env


def agent_lsp(args: list[str], env: dict[str, str], *, cwd: Path | None = None, input: str | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_lsp", *args],
        env=env, cwd=cwd, input=input, capture_output=True, text=True, encoding="utf-8", timeout=timeout,
    )
