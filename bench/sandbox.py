"""The sandbox's cost per command and the questions it saves. Prints, asserts nothing.

    .venv/bin/python bench/sandbox.py [--runs 20] [--tests 200] [--no-pytest]

Each command runs through run_command's runner (`agent_lsp.tools.shell.run_shell`,
the output pumped and the process group reaped as for the agent), alternating,
median of --runs: unsandboxed; in bubblewrap without the seccomp filter; as
commands run by default (bubblewrap and the filter); with a network allow list
(the in-sandbox bridge to the proxy starts first); and with the Landlock
fallback (bubblewrap hidden from it). Commands: `true`, `ls`
of the workspace, and `pytest -q` of a project of --tests tests (its cache in
the workspace). Target: at most 30 ms added to a trivial command by default.

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
from dataclasses import dataclass, field, replace
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
        variants = {"unsandboxed": None, "no filter": replace(sandboxed, seccomp=False), "default": sandboxed,
                    "allow list": SandboxPolicy(roots=(root,), allowed_domains=("pypi.org",)).place("true")}
        (root / "no-bwrap").mkdir()
        landlocked = SandboxPolicy(roots=(root,), search_path=str(root / "no-bwrap")).place("true")
        if landlocked.kind == "landlock":  # the fallback where bubblewrap does not work
            variants["Landlock"] = landlocked
        print(f"sandbox: {policy.describe()}; median of {runs} runs, alternating; added: default - unsandboxed\n")
        print(f"{'command':<24}" + "".join(f"{name:>14}" for name in variants) + f"{'added':>10}")
        commands = [("true", "true"), ("ls", "ls")]
        if pytest:
            commands.append((f"pytest -q ({tests} tests)", f"{sys.executable} -m pytest -q -x"))
        for label, command in commands:
            times: dict[str, list[float]] = {name: [] for name in variants}
            for placement in variants.values():
                await timed(command, root, placement)  # warm the file cache
            for _ in range(runs):
                for name, placement in variants.items():
                    times[name].append(await timed(command, root, placement))
            medians = {name: statistics.median(t) for name, t in times.items()}
            added = medians["default"] - medians["unsandboxed"]
            mark = "" if label not in ("true", "ls") else (
                "  (target <= 30 ms)" if added <= TARGET_MS else "  OVER TARGET")
            print(f"{label:<24}" + "".join(f"{m:>11.1f} ms" for m in medians.values()) + f"{added:>7.1f} ms{mark}")


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
