"""The sandbox's cost per command and the questions it saves. Prints, asserts nothing.

    .venv/bin/python bench/sandbox.py [--runs 20] [--tests 200] [--no-pytest]

Each command runs through run_command's runner (`agent_lsp.tools.shell.run_shell`,
the output pumped and the process group reaped as for the agent), in bubblewrap
and without it, alternating, median of --runs: `true`, `ls` of the workspace, and
`pytest -q` of a project of --tests tests (its cache in the workspace). Target:
at most 30 ms added to a trivial command.

Then the permission questions a scripted ten-command task asks with the
default settings, sandboxed and unsandboxed (the policy's decisions, no editor).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent_lsp.agent.ports import PermissionRequest
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.tools.shell import run_shell
from agent_lsp.workspace.permissions import PermissionPolicy

TARGET_MS = 30.0
TASK = ["ls", "git status", "cat README.md", "python -m pytest -q", "ruff check .", "grep -rn TODO .",
        "sed -i s/a/b/ notes.txt", "git diff", "wc -l *.py", "make build"]


class Signal:
    aborted = False

    async def wait(self) -> None:
        await asyncio.Event().wait()


@dataclass
class Ctx:
    call_id: str = "bench"
    name: str = "run_command"
    turn: int = 1
    step: int = 1
    session_id: str = "bench"
    signal: Signal = field(default_factory=Signal)

    def progress(self, data: dict) -> None:
        pass


def make_project(root: Path, tests: int) -> None:
    (root / "README.md").write_text("bench\n")
    per_file = 20
    for i in range(max(1, tests // per_file)):
        body = "".join(f"def test_{i}_{k}():\n    assert {k} + 1 == {k + 1}\n\n" for k in range(per_file))
        (root / f"test_bench_{i}.py").write_text(body)


async def timed(command: str, cwd: Path, placement) -> float:
    started = time.perf_counter()
    out = await run_shell(command, cwd, 600, Ctx(), placement=placement)
    elapsed = time.perf_counter() - started
    if out.is_error or out.meta.get("exitCode") != 0:
        raise SystemExit(f"{command!r} failed:\n{out.content[-2000:]}")
    return elapsed * 1000


async def overhead(runs: int, tests: int, pytest: bool = True) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, tests)
        policy = SandboxPolicy(roots=(root,))
        sandboxed = policy.place("true")
        if not sandboxed.sandboxed:
            raise SystemExit(f"no sandbox here: {sandboxed.why}")
        print(f"sandbox: {policy.describe()}; median of {runs} runs, alternating\n")
        print(f"{'command':<28} {'unsandboxed':>12} {'sandboxed':>12} {'added':>10}")
        commands = [("true", "true"), ("ls", "ls")]
        if pytest:
            commands.append((f"pytest -q ({tests} tests)", f"{sys.executable} -m pytest -q -x"))
        for label, command in commands:
            plain, boxed = [], []
            await timed(command, root, None)  # warm the file cache
            await timed(command, root, sandboxed)
            for _ in range(runs):
                plain.append(await timed(command, root, None))
                boxed.append(await timed(command, root, sandboxed))
            a, b = statistics.median(plain), statistics.median(boxed)
            mark = "" if label not in ("true", "ls") else ("  (target <= 30 ms)" if b - a <= TARGET_MS else "  OVER TARGET")
            print(f"{label:<28} {a:>10.1f} ms {b:>10.1f} ms {b - a:>7.1f} ms{mark}")


def questions(sandboxed: bool) -> int:
    policy = PermissionPolicy()
    return sum(policy.decide(PermissionRequest(tool="run_command", title=c, kind="command", command=c,
                                               sandboxed=sandboxed)) == "ask" for c in TASK)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--no-pytest", action="store_true", help="only the trivial commands")
    args = parser.parse_args()
    asyncio.run(overhead(args.runs, args.tests, not args.no_pytest))
    print(f"\nquestions over a ten-command task: {questions(True)} sandboxed, {questions(False)} unsandboxed")


if __name__ == "__main__":
    main()
