"""kill -9 of the real server at random points of a rewind that reverts the
files of turns touching 70 files (100 edits), many times: after each restart
every file is either as before the rewind (the user told which were put back)
or as the rewind leaves them (and it is recorded). Prints what became of each
kill (target: every kill consistent, none half done).
The seeded CI run of the same check is tests/lsp_tools/test_revert_crash.py.
Run: .venv/bin/python bench/revert_kill.py [KILLS] [SEED]
"""

from __future__ import annotations

import asyncio
import collections
import logging
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS / "lsp"))
sys.path.insert(0, str(TESTS / "lsp_tools"))

from test_revert_crash import kill_rounds  # noqa: E402


async def main(kills: int, seed: int) -> None:
    logging.disable(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = await kill_rounds(Path(tmp), kills, seed)  # raises, naming the round, on a half-done rewind
    counts = collections.Counter(outcomes)
    print(f"{kills} kills during a rewind of 70 files: {kills} of {kills} consistent "
          f"({counts['rolled back']} rolled back and reported, {counts['completed']} completed, "
          f"{counts['not started']} killed before the first edit)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 1))
