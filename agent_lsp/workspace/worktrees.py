"""Git worktrees for sessions: made, measured, checked and removed with `git`.

Every operation runs `git` as an asyncio subprocess with a timeout, in a
clean environment (no `GIT_DIR` or `GIT_WORK_TREE` inherited from whoever
started the server, no terminal prompts, messages in English). A failure is
`WorktreeError` with git's own one-line reason; a folder outside any
repository is `NotARepository`.

- `repository_of(folder)`: the repository's top folder holding `folder`.
- `add(repository, path, branch, base)`: a worktree at `path` on a new
  branch from `base` (a commit-ish; None: `HEAD`); answers the base commit.
- `changes(path, base)`: files and lines changed in the worktree against the
  base commit (`git diff --numstat`, plus the lines of untracked files).
- `unlanded(repository, path, base)`: whether the worktree holds work the
  main checkout does not have.
- `remove(repository, path, branch)`: the worktree and its branch gone.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from agent_lsp.process import die_with_parent

GIT_TIMEOUT_S = 60.0  # `git worktree add` checks out every file of the base
QUICK_TIMEOUT_S = 15.0  # what a status or a diff may take
UNTRACKED_LINES_LIMIT = 2_000_000  # an untracked file bigger than this (bytes) counts as one changed file, no lines
_GIT_ENV_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
                    "GIT_PREFIX", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")


class WorktreeError(Exception):
    """A git operation on a worktree failed; the message says what and why."""


class NotARepository(WorktreeError):
    pass


@dataclass(frozen=True)
class Changes:
    files: int = 0
    added: int = 0
    removed: int = 0


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _GIT_ENV_DROPPED}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANGUAGE="C", GIT_OPTIONAL_LOCKS="0")
    return env


async def git(cwd: Path, *args: str, timeout_s: float = QUICK_TIMEOUT_S, check: bool = True) -> tuple[int, str, str]:
    """Run `git args` in `cwd`: (exit status, stdout, stderr). With `check`, a
    non-zero status is WorktreeError with git's reason."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git", *args, cwd=cwd, env=_env(), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, preexec_fn=die_with_parent())
    except FileNotFoundError:
        raise WorktreeError("git is not installed (no `git` on PATH)") from None
    except NotADirectoryError:
        raise NotARepository(f"{cwd} is not a folder") from None
    try:
        async with asyncio.timeout(timeout_s):
            out, err = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise WorktreeError(f"git {args[0]} took longer than {timeout_s:.0f} s") from None
    except asyncio.CancelledError:
        process.kill()
        raise
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if check and process.returncode != 0:
        raise WorktreeError(f"git {args[0]} failed: {_reason(stderr)}")
    return process.returncode or 0, stdout, stderr


def _reason(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    line = (fatal or lines or ["no reason given"])[0]
    return line.removeprefix("fatal: ").removeprefix("error: ")


async def repository_of(folder: Path) -> Path:
    """The top folder of the git repository holding `folder`."""
    status, out, _ = await git(folder, "rev-parse", "--show-toplevel", check=False)
    if status != 0 or not out.strip():
        raise NotARepository(f"{folder} is not in a git repository: a worktree session needs one (git init, "
                             "and a first commit)")
    return Path(out.strip()).resolve()


async def commit_of(repository: Path, revision: str) -> str:
    status, out, _ = await git(repository, "rev-parse", "--verify", "--quiet", "--end-of-options",
                               f"{revision}^{{commit}}", check=False)
    if status != 0:
        if revision == "HEAD":
            raise WorktreeError("the repository has no commit yet: a worktree starts from one")
        raise WorktreeError(f"base: no commit named {revision!r} in the repository")
    return out.strip()


async def add(repository: Path, path: Path, branch: str, base: str | None = None) -> str:
    """A worktree at `path` on a new branch `branch` from `base` (None: HEAD);
    answers the base commit."""
    commit = await commit_of(repository, base or "HEAD")
    path.parent.mkdir(parents=True, exist_ok=True)
    await git(repository, "worktree", "add", "--quiet", "-b", branch, str(path), commit, timeout_s=GIT_TIMEOUT_S)
    return commit


async def changes(path: Path, base: str) -> Changes:
    """Files and lines changed in the worktree (committed or not) against `base`;
    an untracked file counts as added lines."""
    _, numstat, _ = await git(path, "diff", "--numstat", "-z", "--no-renames", base, "--")
    files = added = removed = 0
    for record in numstat.split("\0"):
        if not record.strip():
            continue
        plus, minus, _name = (record.split("\t", 2) + ["", ""])[:3]
        files += 1
        added += int(plus) if plus.isdigit() else 0  # "-": a binary file
        removed += int(minus) if minus.isdigit() else 0
    _, untracked, _ = await git(path, "ls-files", "--others", "--exclude-standard", "-z")
    new = [name for name in untracked.split("\0") if name]
    files += len(new)
    added += sum(await asyncio.to_thread(lambda: [_lines(path / name) for name in new]))
    return Changes(files, added, removed)


def _lines(file: Path) -> int:
    try:
        if file.is_symlink() or file.stat().st_size > UNTRACKED_LINES_LIMIT:
            return 0
        data = file.read_bytes()
    except OSError:
        return 0
    if b"\0" in data[:8000]:  # binary, as git counts it
        return 0
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


async def unlanded(repository: Path, path: Path, base: str) -> bool:
    """Whether the worktree holds work the main checkout lacks: uncommitted
    changes or untracked files, or commits on its branch that the main
    checkout's HEAD does not contain."""
    if not path.is_dir():
        return False
    _, status, _ = await git(path, "status", "--porcelain", "--untracked-files=all")
    if status.strip():
        return True
    _, head, _ = await git(path, "rev-parse", "HEAD")
    head = head.strip()
    if head == base:
        return False
    ancestor, _, _ = await git(repository, "merge-base", "--is-ancestor", head, "HEAD", check=False)
    return ancestor != 0


async def remove(repository: Path, path: Path, branch: str) -> None:
    """The worktree (whatever it holds) and its branch removed; a worktree folder
    already gone is pruned from git's list."""
    if path.exists():
        await git(repository, "worktree", "remove", "--force", "--force", str(path), timeout_s=GIT_TIMEOUT_S)
    else:
        await git(repository, "worktree", "prune")
    listed, _, _ = await git(repository, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
    if listed == 0:
        await git(repository, "branch", "-D", branch)
