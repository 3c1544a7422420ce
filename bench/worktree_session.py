"""A session in its own git worktree: what it costs beyond `git worktree add`. Prints, asserts nothing.

    .venv/bin/python bench/worktree_session.py [--files 5000] [--runs 5]

On a repository of --files small files (one commit), the median of --runs of:

- `git worktree add -b BRANCH PATH HEAD`, then removed (the floor)
- a worktree session made as `agent/session/new {worktree: true}` makes it
  (`WorktreeSessions.new_session`: the repository found, the worktree added,
  its host built, the session created and recorded), then deleted; and its
  part beyond the `git worktree add` it ran (on a loaded machine git's own
  time varies by seconds between runs; this part does not)
- its listing entry's changes (`git diff --numstat` + untracked files) after
  the agent changed 50 files
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agent_lsp.config import Settings
from agent_lsp.service.worktree_sessions import WorktreeSessions
from agent_lsp.workspace import worktrees
from agent_lsp.workspace.disk_editor import DiskEditor
from agent_lsp.workspace.host import WorkspaceHost
from agent_lsp.workspace.session_location import sessions_dir_for


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repository(root: Path, files: int) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for index in range(files):
        folder = root / f"pkg{index // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{index:05d}.py").write_text(f"def f{index}():\n    return {index}\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "-c", "user.email=b@example.com", "-c", "user.name=B", "commit", "-q", "-m", "files")


async def measure(files: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = base / "repo"
        make_repository(repo, files)
        settings = Settings.model_validate({"model": {"provider": "scripted"}, "sessionsDir": str(base / "sessions")})
        hosts: list[WorkspaceHost] = []

        def make_host(root: Path) -> WorkspaceHost:
            host = WorkspaceHost(root, settings=settings, editor=DiskEditor([root]), env={})
            hosts.append(host)
            return host

        sessions = WorktreeSessions(base / "data" / "worktrees", make_host,
                                    lambda root: sessions_dir_for(root, settings, {}))
        plain, session, beyond, measured = [], [], [], []
        adding: list[float] = []
        add = worktrees.add

        async def timed_add(*args, **kwargs):
            started = time.perf_counter()
            try:
                return await add(*args, **kwargs)
            finally:
                adding.append(time.perf_counter() - started)

        worktrees.add = timed_add  # type: ignore[assignment]
        for run in range(runs):
            path = base / f"plain{run}"
            started = time.perf_counter()
            git(repo, "worktree", "add", "-q", "-b", f"plain{run}", str(path), "HEAD")
            plain.append(time.perf_counter() - started)
            git(repo, "worktree", "remove", "--force", str(path))

            started = time.perf_counter()
            agent = await sessions.new_session(repo.resolve())
            session.append(time.perf_counter() - started)
            beyond.append(session[-1] - adding[-1])
            (record,) = sessions.records(repo.resolve())
            for index in range(50):
                changed = record.path / f"pkg{index:03d}" / f"mod{index * 100:05d}.py"
                changed.write_text(changed.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
            started = time.perf_counter()
            await worktrees.changes(record.path, record.base)
            measured.append(time.perf_counter() - started)
            await sessions.delete_session(sessions.host(record), agent.session_id, main_roots=[repo.resolve()],
                                          force=True)
        for host in hosts:
            await host.close()
    return {"git worktree add (ms)": statistics.median(plain) * 1000,
            "worktree session new (ms)": statistics.median(session) * 1000,
            "beyond its git worktree add (ms)": statistics.median(beyond) * 1000,
            "changes of 50 files (ms)": statistics.median(measured) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.files, args.runs))
    print(f"repository of {args.files} files, median of {args.runs} runs")
    for name, value in figures.items():
        print(f"  {name:32} {value:8.1f}")


if __name__ == "__main__":
    main()
