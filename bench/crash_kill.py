"""kill -9 of the real server at random points of a streaming turn with tools,
many times: how many sessions reload, and how many lose an event the client
was shown or reuse its seq (target: all reload, none lose or reuse).
The seeded CI run of the same check is tests/lsp/test_lsp_crash.py.
Run: .venv/bin/python bench/crash_kill.py [KILLS] [SEED]
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lsp"))

from lsp_harness import running_server  # noqa: E402
from test_lsp_crash import assert_nothing_shown_was_lost, turn_script  # noqa: E402


async def main(kills: int, seed: int) -> None:
    rng = random.Random(seed)
    reloaded = kept = shown_total = 0
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        workspace, sessions = Path(tmp) / "ws", Path(tmp) / "sessions"
        workspace.mkdir()
        (workspace / "a.txt").write_text("hello\n")
        for kill in range(kills):
            async with running_server(folders=[workspace], sessions_dir=sessions, script=turn_script(80)) as editor:
                sid = (await editor.request("agent/followup", {"content": f"go {kill}"}))["sessionId"]
                await asyncio.sleep(rng.uniform(0.05, 1.6))
                await editor.kill()
                shown = list(editor.events[sid])
            shown_total += len(shown)
            try:
                async with running_server(folders=[workspace], sessions_dir=sessions) as editor:
                    stored = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
                reloaded += 1
                assert_nothing_shown_was_lost(shown, stored)
                kept += 1
            except Exception as error:  # noqa: BLE001 - counted and reported
                failures.append(f"kill {kill}: {error}")
    print(f"{kills} kills: {reloaded} sessions reloaded, {kept} kept everything the client was shown "
          f"({shown_total} events shown in all); target: {kills} and {kills}")
    for failure in failures:
        print("  ", failure.splitlines()[0])


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(int(args[0]) if args else 20, int(args[1]) if len(args) > 1 else 1))
