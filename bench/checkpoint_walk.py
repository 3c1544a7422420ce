"""Command checkpoints: the cost of recording the workspace around a shell
command (agent_lsp.workspace.checkpoints), for a workspace of N text files.
Targets: the first checkpoint (every file read and stored once) < 3 s for
5,000 files; an unchanged workspace (stat only) < 300 ms; a command's
changes to 10 files found and diffed < 300 ms.
Run: .venv/bin/python bench/checkpoint_walk.py [N]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from agent_lsp.workspace.checkpoints import WorkspaceCheckpoints


def make_workspace(root: Path, n: int) -> list[Path]:
    files = []
    for i in range(n):
        folder = root / f"pkg{i // 100}"
        folder.mkdir(exist_ok=True)
        path = folder / f"mod{i}.py"
        path.write_text("".join(f"value_{i}_{k} = {k}\n" for k in range(60)), encoding="utf-8")
        files.append(path)
    return files


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, store = Path(tmp) / "ws", Path(tmp) / "store"
        root.mkdir()
        files = make_workspace(root, n)
        checkpoints = WorkspaceCheckpoints(root, store)
        t0 = time.perf_counter()
        first = await checkpoints.before_command()
        t1 = time.perf_counter()
        await checkpoints.changes_since(first)
        again = await checkpoints.before_command()
        t2 = time.perf_counter()
        for path in files[:10]:
            path.write_text(path.read_text(encoding="utf-8").replace(" = 3\n", " = 33\n"), encoding="utf-8")
        t3 = time.perf_counter()
        changes = await checkpoints.changes_since(again)
        t4 = time.perf_counter()
        assert len(changes) == 10, len(changes)
        checkpoints.close()
    print(f"files: {n}")
    print(f"first checkpoint:       {(t1 - t0) * 1000:8.1f} ms   (target < 3000 ms for 5,000 files)")
    print(f"unchanged checkpoint:   {(t2 - t1) * 1000 / 2:8.1f} ms   (target < 300 ms; one of the two walks)")
    print(f"10 changed files found: {(t4 - t3) * 1000:8.1f} ms   (target < 300 ms)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
