"""The command line itself: --version, --help, addresses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import argparse
import pytest

from agent_lsp import __version__
from agent_lsp.cli.main import parse_address

from cli_helpers import agent_lsp, clean_env


def test_version(tmp_path: Path):
    done = agent_lsp(["--version"], clean_env(tmp_path))
    assert done.returncode == 0
    assert done.stdout.strip() == f"agent-lsp {__version__}"


def test_version_does_not_load_the_server():
    # `--version` must stay instant: it may not import pygls or the agent.
    probe = (
        "import sys\n"
        "from agent_lsp.cli.main import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('pygls', 'lsprotocol', 'agent_lsp.agent', 'httpx') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_help_lists_the_commands(tmp_path: Path):
    done = agent_lsp(["--help"], clean_env(tmp_path))
    assert done.returncode == 0
    for command in ("serve", "run", "chat", "sessions", "demo", "--tcp", "--ws", "--log-file", "--log-level"):
        assert command in done.stdout


def test_help_says_how_to_configure_a_model_and_where_to_look(tmp_path: Path):
    done = agent_lsp(["--help"], clean_env(tmp_path))
    for hint in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AGENT_LSP_BASE_URL", "agent-lsp config show", "agent-lsp demo"):
        assert hint in done.stdout
    assert "temporary folder" not in agent_lsp(["demo", "--help"], clean_env(tmp_path)).stdout
    sessions = agent_lsp(["sessions", "--help"], clean_env(tmp_path)).stdout
    assert "the session to show, export or delete" in sessions and "list (the default)" in sessions


@pytest.mark.parametrize(("args", "said"), [
    (["sessions", "list", "EXTRA"], "takes no ID"),
    (["run", "--timeout", "-1", "hi"], "above 0"),
    (["run", "--timeout", "0", "hi"], "above 0"),
    (["run", "--timeout", "soon", "hi"], "not a number of seconds"),
])
def test_arguments_that_cannot_mean_anything_are_refused(tmp_path: Path, args: list[str], said: str):
    done = agent_lsp(args, clean_env(tmp_path))
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_bad_arguments_are_a_usage_error(tmp_path: Path):
    done = agent_lsp(["serve", "--tcp", "localhost:notaport"], clean_env(tmp_path))
    assert done.returncode == 2
    assert "HOST:PORT" in done.stderr


@pytest.mark.parametrize(
    ("text", "address"),
    [("127.0.0.1:8765", ("127.0.0.1", 8765)), (":9000", ("127.0.0.1", 9000)), ("9000", ("127.0.0.1", 9000)),
     ("0.0.0.0:1", ("0.0.0.0", 1)), ("[::1]:8080", ("::1", 8080))],
)
def test_addresses_default_to_loopback(text: str, address: tuple[str, int]):
    assert parse_address(text) == address


def test_port_out_of_range():
    with pytest.raises(argparse.ArgumentTypeError):
        parse_address("127.0.0.1:70000")
