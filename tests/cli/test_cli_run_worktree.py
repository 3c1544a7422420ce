"""`agent-lsp run --worktree`: the agent works in a new git worktree; the checkout stays as it is."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from cli_helpers import agent_lsp, clean_env

WRITE = [{"tools": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "from the agent\n"}}]},
         {"text": "Written."}]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_run_in_a_worktree_leaves_the_checkout_as_it_is(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-q", "--allow-empty", "-m", "first")
    settings = json.dumps({"model": {"provider": "scripted", "script": WRITE}})
    done = agent_lsp(["run", "write notes", "--worktree", "-w", str(repo), "--settings", settings], clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    match = re.search(r"working in the worktree (\S+) on the branch (agent/\w+)", done.stderr)
    assert match, done.stderr
    worktree, branch = Path(match.group(1)), match.group(2)
    assert (worktree / "notes.txt").read_text() == "from the agent\n"
    assert not (repo / "notes.txt").exists() and git(repo, "status", "--porcelain") == ""
    assert branch in git(repo, "branch", "--list", branch)
    assert done.stdout.splitlines()[-1] == "Written."


def test_run_in_a_worktree_outside_git_says_so(tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    done = agent_lsp(["run", "hi", "--worktree", "-w", str(plain)], clean_env(tmp_path))
    assert done.returncode == 1
    assert "is not in a git repository" in done.stderr and "Traceback" not in done.stderr
