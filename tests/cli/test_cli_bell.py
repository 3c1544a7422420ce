"""At a terminal, `run` and `chat` ring its bell when a question of the agent
waits, and when a turn that ran a while ends, so a user in another window or
tab is told; `--bell-after off` never rings. Driven through a real
pseudo-terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli_helpers import agent_lsp, clean_env
from test_cli_terminal import COMMAND_SCRIPT, Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def chat(tmp_path: Path, workspace: Path, *options: str) -> str:
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    script = [{"text": "hello back"}]
    terminal = Terminal(["chat", "--settings", json.dumps({"model": {"provider": "scripted", "script": script}}),
                         *options], env, workspace)
    terminal.wait_for("you> ")
    terminal.type("hello\n")
    terminal.wait_for("hello back")
    terminal.type("/exit\n")
    assert terminal.exit_code() == 0
    return terminal.output


def test_a_question_of_the_agent_rings_the_terminal(tmp_path: Path, workspace: Path):
    settings = json.dumps({"model": {"provider": "scripted", "script": COMMAND_SCRIPT}})
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    terminal = Terminal(["run", "make a file", "--settings", settings], env, workspace)
    terminal.wait_for("Allow? [y] once")
    assert "\aThe agent asks permission" in terminal.output
    terminal.type("n\n")
    terminal.wait_for("Finished.")
    assert terminal.exit_code() == 0
    # the turn was quick: only the question rang
    assert terminal.output.count("\a") == 1, terminal.output


def test_a_turn_that_ran_a_while_rings_at_its_end_unless_turned_off(tmp_path: Path, workspace: Path):
    rang = chat(tmp_path / "a", workspace, "--bell-after", "0")
    assert "hello back" in rang and rang.count("\a") == 1, rang
    quick = chat(tmp_path / "b", workspace)  # under the default 5 s
    assert "\a" not in quick
    off = chat(tmp_path / "c", workspace, "--bell-after", "off")
    assert "\a" not in off


def test_no_bell_where_no_terminal_reads(tmp_path: Path, workspace: Path):
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    done = agent_lsp(["run", "hi", "--bell-after", "0", "--settings",
                      json.dumps({"model": {"provider": "scripted", "script": [{"text": "ok"}]}})],
                     env, cwd=workspace, input="")
    assert done.returncode == 0, done.stderr
    assert "\a" not in done.stdout + done.stderr
