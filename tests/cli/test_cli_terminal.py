"""A person at a terminal: permission questions answered at the prompt, and
`agent-lsp chat` with Ctrl-C cancelling a turn. Driven through a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import select
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import agent_lsp, clean_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


class Terminal:
    """`agent-lsp ARGS` running on a pseudo-terminal; what it printed so far in `.output`."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path):
        import pty

        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become agent-lsp
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "agent_lsp", *args], env)
        self.output = ""

    def _read(self, seconds: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], seconds)
        if ready:
            try:
                self.output += os.read(self.fd, 65536).decode("utf-8", errors="replace")
            except OSError:  # the child closed the terminal
                time.sleep(seconds)

    def wait_for(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {text!r}; the terminal shows:\n{self.output}")
            self._read(0.05)

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def exit_code(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._read(0.05)
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            self._read(0.05)
        os.kill(self.pid, 9)
        raise AssertionError(f"agent-lsp did not exit; the terminal shows:\n{self.output}")


COMMAND_SCRIPT = [
    {"text": "Creating the file.", "tools": [{"name": "run_command", "arguments": {"command": "echo hi > made.txt"}}]},
    {"text": "Finished."},
]


def test_permission_is_asked_at_the_terminal(tmp_path: Path, workspace: Path):
    settings = json.dumps({"model": {"provider": "scripted", "script": COMMAND_SCRIPT}})
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    terminal = Terminal(["run", "make a file", "--settings", settings], env, workspace)
    terminal.wait_for("echo hi > made.txt")
    terminal.wait_for("Allow? [y] once")
    terminal.type("y\n")
    terminal.wait_for("Finished.")
    assert terminal.exit_code() == 0
    assert (workspace / "made.txt").read_text() == "hi\n"


def test_permission_denied_without_a_terminal(tmp_path: Path, workspace: Path):
    settings = json.dumps({"model": {"provider": "scripted", "script": COMMAND_SCRIPT}})
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    denied = agent_lsp(["run", "make a file", "--settings", settings], env, cwd=workspace, input="")
    assert denied.returncode == 0, denied.stderr
    assert not (workspace / "made.txt").exists()
    assert "--yes" in denied.stderr  # says how to allow it
    assert "Finished." in denied.stdout  # the model saw the denial and carried on

    allowed = agent_lsp(["run", "make a file", "--settings", settings, "--yes"], env, cwd=workspace, input="")
    assert allowed.returncode == 0, allowed.stderr
    assert (workspace / "made.txt").read_text() == "hi\n"


def test_chat_ctrl_c_cancels_the_turn_not_the_chat(tmp_path: Path, workspace: Path):
    script = [{"text": "hello back"}, {"hang": "thinking it over"}, {"text": "still here"}]
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    terminal = Terminal(["chat", "--settings", json.dumps({"model": {"provider": "scripted", "script": script}})],
                        env, workspace)
    terminal.wait_for("you> ")
    terminal.type("hello\n")
    terminal.wait_for("hello back")
    terminal.type("think\n")
    terminal.wait_for("thinking it over")
    terminal.type("\x03")  # Ctrl-C
    terminal.wait_for("(turn ended: aborted)")
    terminal.type("again\n")
    terminal.wait_for("still here")
    terminal.type("/exit\n")
    assert terminal.exit_code() == 0
    assert "continue it with --session" in terminal.output


def test_chat_ctrl_c_in_the_first_reply_keeps_the_session(tmp_path: Path, workspace: Path):
    script = [{"hang": "thinking it over"}, {"text": "still here"}]
    sessions = tmp_path / "sessions"
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(sessions))
    terminal = Terminal(["chat", "--settings", json.dumps({"model": {"provider": "scripted", "script": script}})],
                        env, workspace)
    terminal.wait_for("you> ")
    terminal.type("first question\n")
    terminal.wait_for("thinking it over")
    terminal.type("\x03")  # Ctrl-C during the session's very first turn
    terminal.wait_for("(turn ended: aborted)")
    terminal.type("second question\n")
    terminal.wait_for("still here")
    terminal.type("/exit\n")
    assert terminal.exit_code() == 0
    (stored,) = sessions.rglob("*.jsonl")  # one session: the second message continued the first
    log = stored.read_text()
    assert "first question" in log and "second question" in log
    assert f"continue it with --session {stored.stem}" in terminal.output


def test_chat_ctrl_c_at_the_prompt_does_not_quit(tmp_path: Path, workspace: Path):
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    terminal = Terminal(["chat"], env, workspace)
    terminal.wait_for("you> ")
    assert "model: none configured" in terminal.output  # the banner names the model, or says there is none
    terminal.type("\x03")
    terminal.wait_for("Ctrl-D or /exit quits)")
    terminal.type("hello\n")
    terminal.wait_for("You said: hello")
    terminal.type("\x04")  # Ctrl-D
    assert terminal.exit_code() == 0


def test_ctrl_c_while_starting_exits_without_a_traceback(tmp_path: Path, workspace: Path):
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    for delay in (0.2, 0.6, 1.0):  # while Python imports, while the server starts, at the prompt
        for _ in range(5):
            terminal = Terminal(["chat"], env, workspace)
            time.sleep(delay)
            terminal.type("\x03")
            time.sleep(0.5)
            terminal.type("\x04")
            code = terminal.exit_code()
            # On a loaded machine Ctrl-C can land while the interpreter itself still
            # starts (CPython's own "init_import_site" error, before any of our code):
            # that says nothing about us, so press it a little later.
            if "init_import_site" not in terminal.output:
                break
            delay += 0.2
        assert "Traceback" not in terminal.output and "Error" not in terminal.output, terminal.output
        assert code in (0, 130, -2), terminal.output


def test_acp_typed_at_a_terminal_says_what_it_expects(tmp_path: Path, workspace: Path):
    terminal = Terminal(["acp"], clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions")), workspace)
    terminal.wait_for("agent-lsp chat")
    terminal.type("hello\n")
    terminal.wait_for("not JSON")
    terminal.type("\x04")
    assert terminal.exit_code() == 0
    assert "Traceback" not in terminal.output
