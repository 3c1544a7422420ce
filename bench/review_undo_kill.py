"""kill -9 of the real server at random points of an undo of every reviewed
change of a session across 24 files (48 hunks), many times: after each restart
every file is either as before the undo (its changes pending again, the user
told which files were put back) or undone (the undo recorded for every file,
the model told). Prints what became of each kill (target: every kill
consistent, none half done).
The seeded CI run of the same check is tests/lsp_tools/test_review_undo_crash.py.
Run: .venv/bin/python bench/review_undo_kill.py [KILLS] [SEED]
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

from test_review_undo_crash import FILES, kill_rounds  # noqa: E402


async def main(kills: int, seed: int) -> None:
    logging.disable(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = await kill_rounds(Path(tmp), kills, seed)  # raises, naming the round, on a half-done undo
    counts = collections.Counter(outcomes)
    print(f"{kills} kills during an undo of reviewed changes in {FILES} files: {kills} of {kills} consistent "
          f"({counts['rolled back']} rolled back and reported, {counts['completed']} completed, "
          f"{counts['not started']} killed before the first edit)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 1))
