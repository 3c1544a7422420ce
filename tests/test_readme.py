"""The README's commands work: every command of a fenced `sh` block in
README.md is run here as a user would type it, in a clean environment (no
keys, a fresh HOME), or is listed in NOT_RUN with the reason it cannot run
offline on a test machine. A command added to the README fails this test
until it is one or the other."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
BIN = Path(sys.executable).parent  # where `agent-lsp` of this environment is

# command (as written) -> why a test does not run it
NOT_RUN = {
    "python3 .ci/dev.py test": "it is this test suite, with the editor parts around it",
    "python3 .ci/dev.py bench": "it runs every benchmark under bench/ (minutes of full CPU); they are checks of their own",
    "OPENAI_BASE_URL=http://localhost:11434/v1 AGENT_LSP_MODEL=qwen2.5-coder:14b python3 .ci/dev.py demo":
        "needs an Ollama server with that model",
    "pip install .": "tests/cli/test_cli_packaging.py runs it in a copy of the checkout and a fresh environment",
    'agent-lsp run "why is this red?" --image shot.png':
        "it needs an image file; tests/cli/test_cli_images.py runs run --image against a local model server",
}


# The README's commands the tests below run, as written there.
RUN = (
    "python3 .ci/dev.py demo",
    "agent-lsp --version",
    'agent-lsp run "explain what src/app.py does" --workspace .',
    'agent-lsp run "and now add tests" --session s_…',
    "agent-lsp chat --workspace .",
    "agent-lsp sessions list --workspace .",
    "python3 .ci/dev.py test tests/agent -q",
)


def readme_commands() -> list[str]:
    """The commands of the README's ```sh blocks, comments and prompts removed."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def test_every_readme_command_is_run_or_says_why_not():
    commands = readme_commands()
    assert len(commands) >= 9  # the blocks were found
    unknown = [c for c in commands if c not in NOT_RUN and c not in RUN]
    assert unknown == [], "add these to test_readme.py: run them, or say why not in NOT_RUN"
    assert set(NOT_RUN) | set(RUN) <= set(commands), "this test lists commands the README no longer has"


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    """A newcomer's shell: no keys or agent_lsp settings, a fresh HOME, this
    environment's bin first on PATH (as after `pip install .` in a venv)."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("AGENT_LSP_")}
    home = tmp_path / "home"
    home.mkdir()
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), NO_COLOR="1", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    return env


def _sh(command: str, env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(shlex.split(command), env=env, cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=300)


def test_the_demo_command(user_env: dict[str, str]):
    done = _sh("python3 .ci/dev.py demo", user_env, ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "built-in scripted model" in done.stdout and "+    return sum(values) / len(values)" in done.stdout


def test_the_install_check(user_env: dict[str, str], tmp_path: Path):
    done = _sh("agent-lsp --version", user_env, tmp_path)
    assert done.returncode == 0 and re.fullmatch(r"agent-lsp \d+\.\d+\.\d+\S*", done.stdout.strip())


def test_the_terminal_commands_in_order(user_env: dict[str, str], tmp_path: Path):
    """`run`, `run --session`, `chat` and `sessions list` in a project folder,
    the session id of the first given to the second as the README says."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hello')\n")
    first = _sh('agent-lsp run "explain what src/app.py does" --workspace .', user_env, project)
    assert first.returncode == 0, first.stderr
    assert "explain what src/app.py does" in first.stdout  # the scripted model echoes it
    session = re.search(r"--session (s_\S+)\)", first.stderr).group(1)

    second = _sh('agent-lsp run "and now add tests" --session s_…'.replace("s_…", session), user_env, project)
    assert second.returncode == 0, second.stderr
    assert "and now add tests" in second.stdout and f"--session {session}" in second.stderr

    chat = _sh("agent-lsp chat --workspace .", user_env, project, stdin="hi there\n/exit\n")
    assert chat.returncode == 0, chat.stderr
    assert "hi there" in chat.stdout

    listing = _sh("agent-lsp sessions list --workspace .", user_env, project)
    assert listing.returncode == 0, listing.stderr
    assert session in listing.stdout


def test_the_development_test_command(user_env: dict[str, str]):
    done = _sh("python3 .ci/dev.py test tests/agent -q", user_env, ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"^\d+ passed", done.stdout.strip().splitlines()[-1])
