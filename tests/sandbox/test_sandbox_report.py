"""`agent-lsp config show` says which sandbox the commands run in, or why none, with the fix."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import agent_lsp, clean_env
from sandbox_places import make_places, needs_bwrap


def sandbox_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("sandbox: "))


@needs_bwrap()
def test_config_show_names_the_sandbox_in_use(tmp_path: Path):
    places = make_places(tmp_path)
    env = clean_env(tmp_path)
    shown = agent_lsp(["config", "show", "-w", str(places.workspace)], env)
    assert shown.returncode == 0, shown.stderr
    assert sandbox_line(shown.stdout).startswith("sandbox: bubblewrap (/") and shown.stdout.count(", no network") == 1


def test_config_show_says_why_there_is_no_sandbox_and_how_to_get_one(tmp_path: Path):
    places = make_places(tmp_path)
    env = clean_env(tmp_path, PATH=places.path_without_bwrap())
    no_landlock = '{"shell": {"landlock": false}}'
    auto = agent_lsp(["config", "show", "-w", str(places.workspace), "--settings", no_landlock], env)
    assert sandbox_line(auto.stdout) == (
        "sandbox: none, commands run unsandboxed and are asked about: bubblewrap is not installed: "
        "apt install bubblewrap (Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)")
    require = agent_lsp(["config", "show", "--json", "-w", str(places.workspace), "--settings",
                         '{"shell": {"sandbox": "require", "landlock": false}}'], env)
    assert json.loads(require.stdout)["sandbox"].startswith('none, so commands are refused (shell.sandbox is "require")')
