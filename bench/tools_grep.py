"""grep over a 20,000-file tree: ripgrep vs the Python fallback (same output).

    .venv/bin/python bench/tools_grep.py [--files 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_lsp.tools.base import ToolEnv  # noqa: E402
from agent_lsp.tools.paths import WorkspaceRoots  # noqa: E402
from agent_lsp.tools.search import Grep, GrepInput  # noqa: E402
from agent_lsp.workspace.disk_editor import DiskEditor  # noqa: E402

WORDS = "alpha beta gamma delta epsilon zeta theta lambda sigma omega value result index".split()


class Ctx:
    call_id, name, turn, step, session_id = "c", "grep", 1, 1, "bench"

    class signal:
        aborted, reason = False, None

    def progress(self, data): ...


def make_tree(root: Path, files: int) -> None:
    rng = random.Random(7)
    per_dir = 100
    for i in range(files):
        folder = root / f"pkg{i // per_dir:03d}"
        folder.mkdir(exist_ok=True)
        lines = [f"def f{j}({rng.choice(WORDS)}): return {rng.choice(WORDS)} + {j}" for j in range(40)]
        if i % 997 == 0:
            lines[rng.randrange(40)] = "RARE_NEEDLE = 42"
        (folder / f"mod{i % per_dir:03d}.py").write_text("\n".join(lines) + "\n")
    (root / ".gitignore").write_text("pkg00*/mod05*.py\n")


async def run(tool: Grep, args: dict) -> tuple[float, str]:
    started = time.perf_counter()
    out = await tool.run(GrepInput.model_validate(args), Ctx())
    return time.perf_counter() - started, out.content


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        make_tree(root, options.files)
        print(f"tree: {options.files} files, {options.files * 40} lines, built in {time.perf_counter() - started:.1f} s")
        env = ToolEnv(DiskEditor([root]), WorkspaceRoots([root]))
        engines = {"python": Grep(env, ripgrep=None)}
        if rg:
            engines["ripgrep"] = Grep(env, ripgrep=rg)
        else:
            print("ripgrep: not installed (apt-get install -y ripgrep); Python fallback only")
        cases = {
            "rare literal (whole tree)": {"pattern": "RARE_NEEDLE"},
            "regex, few hits": {"pattern": r"RARE_\w+ = \d+", "contextLines": 2},
            "common word, capped at 100": {"pattern": "omega"},
            "no match": {"pattern": "does_not_occur_anywhere"},
        }
        print(f"{'case':32} " + " ".join(f"{name:>14}" for name in engines) + "  same output")
        for label, args in cases.items():
            times, outputs = {}, {}
            for name, tool in engines.items():
                samples = []
                for _ in range(options.repeat):
                    elapsed, outputs[name] = await run(tool, args)
                    samples.append(elapsed)
                times[name] = statistics.median(samples)
            same = len(set(outputs.values())) == 1
            print(f"{label:32} " + " ".join(f"{times[n] * 1000:11.0f} ms" for n in engines) + f"  {same}")


if __name__ == "__main__":
    asyncio.run(main())
