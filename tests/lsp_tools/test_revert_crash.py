"""kill -9 of the server in the middle of a rewind that reverts the files of
turns touching 70 files (100 edits), then a restart: every file is either as it was
before the rewind (and the user is told which files were put back, and the
rewind may be run again) or as the rewind leaves them (and the rewind is
recorded). Never some files one way and some the other.

A seeded run of a few kills; `bench/revert_kill.py` runs many more. The kill
lands at random: just after the editor applied the k-th edit of
the revert, or a random time into it (between edits, while the events are
written).
"""

from __future__ import annotations

import asyncio
import random
import shutil
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from tools_harness import run_turn, tool_server

pytestmark = pytest.mark.asyncio

FILES = 60
NEW = 10
ROUNDS = 3  # bench/revert_kill.py runs more
SEED = 34


def writes(texts: dict[str, str]) -> dict:
    return {"tools": [{"name": "write_file", "arguments": {"path": name, "content": text}} for name, text in texts.items()]}


def names(count: int, prefix: str = "f") -> list[str]:
    return [f"{prefix}{i:02}.txt" for i in range(count)]


def state(workspace: Path) -> dict[str, str | None]:
    return {name: (workspace / name).read_text(encoding="utf-8") if (workspace / name).exists() else None
            for name in names(FILES) + names(NEW, "new")}


async def make_session(workspace: Path, sessions: Path) -> tuple[str, dict, dict]:
    """Two turns: half of the files and ten new ones, then every file. The state
    the rewind to turn 1 starts from, and the one it leaves."""
    for name in names(FILES):
        (workspace / name).write_text(f"{name} as the user wrote it\n", encoding="utf-8")
    after = state(workspace)
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        editor.permission_answer = "always"
        first = {n: f"{n} one\n" for n in names(FILES)[::2]} | {n: f"{n} new\n" for n in names(NEW, "new")}
        sid, _ = await run_turn(editor, [writes(first), {"text": "1"}])
        await run_turn(editor, [writes({n: f"{n} two\n" for n in names(FILES)}), {"text": "2"}], session_id=sid)
        before = state(workspace)
    return sid, before, after


@pytest.mark.slow
async def test_kill_9_during_a_rewind_leaves_no_file_half_reverted(tmp_path: Path):
    outcomes = await kill_rounds(tmp_path, ROUNDS, SEED)
    assert "rolled back" in outcomes, outcomes


async def kill_rounds(tmp_path: Path, rounds: int, seed: int) -> list[str]:
    """`rounds` rewinds killed at random and checked after a restart (AssertionError
    naming the round otherwise); what became of each: "completed", "rolled back"
    (files put back and the user told) or "not started" (killed before any edit)."""
    rng = random.Random(seed)
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    sid, before, after = await make_session(workspace, sessions)
    pristine = tmp_path / "pristine"
    shutil.copytree(workspace, pristine / "ws")
    shutil.copytree(sessions, pristine / "sessions")
    outcomes: list[str] = []
    stack = AsyncExitStack()
    editor = await stack.enter_async_context(tool_server(folders=[workspace], sessions_dir=sessions))
    try:
        for round_ in range(rounds):
            rewind = asyncio.wrap_future(editor.client.protocol.send_request(
                "agent/session/rewind", {"sessionId": sid, "turn": 1, "revertFiles": True}))
            rewind.add_done_callback(lambda done: done.cancelled() or done.exception())  # the kill fails it: expected
            if round_ % 2 == 0:  # just after the editor applied the k-th of the revert's 100 edits
                at = rng.randint(1, 110)
                await editor.wait_for(lambda: rewind.done() or len(editor.applied_edits) >= at, what=f"edit {at}")
            else:  # a random moment of it (between edits, while its events are written), not a wait for it
                await editor.wait_for(lambda: rewind.done() or editor.applied_edits, what="the first edit")
                await asyncio.sleep(rng.uniform(0.0, 0.5))
            await editor.kill()
            edited = bool(editor.applied_edits)
            await stack.aclose()
            stack = AsyncExitStack()
            editor = await stack.enter_async_context(tool_server(folders=[workspace], sessions_dir=sessions))
            events = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
            now = state(workspace)
            if any(e["type"] == "session/rewind" for e in events):
                assert now == after, f"round {round_}: the rewind is recorded, but not every file is reverted"
                outcomes.append("completed")
                # back to the state before the rewind for the next round
                await stack.aclose()
                for path, copy in ((workspace, pristine / "ws"), (sessions, pristine / "sessions")):
                    shutil.rmtree(path)
                    shutil.copytree(copy, path)
                stack = AsyncExitStack()
                editor = await stack.enter_async_context(tool_server(folders=[workspace], sessions_dir=sessions))
                continue
            mixed = sorted(n for n in now if now[n] != before[n])
            assert not mixed, f"round {round_}: no rewind is recorded, but these files were reverted: {mixed}"
            recovered = [e["data"] for e in events if e["type"] == "revert/recovered"]
            if edited:  # the user is told, by name, what was put back
                assert recovered and recovered[-1]["outcome"] == "rolled-back", f"round {round_}: not reported"
                put_back = sorted(Path(p).name for p in recovered[-1]["paths"])
                assert put_back and set(put_back) <= set(before)
                warnings = [m.message for m in editor.client.messages]
                assert any("put back" in w and put_back[0] in w for w in warnings), warnings
            outcomes.append("rolled back" if edited else "not started")
        # the rewind a crash undid can be run again
        result = await editor.request("agent/session/rewind", {"sessionId": sid, "turn": 1, "revertFiles": True})
        assert [r["turn"] for r in result["reverts"]] == [2, 1]
        assert state(workspace) == after
    finally:
        await stack.aclose()
    return outcomes
