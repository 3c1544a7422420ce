"""kill -9 of the server in the middle of undoing every reviewed change of a
session across many files, then a restart: every file is either as it was
before the undo (its changes pending again, and the user told which files were
put back) or undone (the undo recorded for every file, and the model told what
the user rejected). Never some files undone and others still pending.

The kill lands at random: just after the editor applied the k-th file's undo,
or a random time into the undo (between edits, while its events are written).
A seeded run of a few kills; `bench/review_undo_kill.py` runs many more.
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

FILES = 24
ROUNDS = 4
SEED = 7
REVIEW = {"edits": {"review": "review"}}


def names() -> list[str]:
    return [f"m{i:02}.txt" for i in range(FILES)]


def original(name: str) -> str:
    return "".join(f"{name} line {n}\n" for n in range(12))


def changed(name: str) -> str:
    lines = original(name).splitlines(keepends=True)
    lines[1], lines[8] = f"{name} LINE ONE\n", f"{name} LINE EIGHT\n"  # two hunks
    return "".join(lines)


def state(workspace: Path) -> dict[str, str]:
    return {name: (workspace / name).read_text(encoding="utf-8") for name in names()}


async def make_session(workspace: Path, sessions: Path) -> str:
    """One turn changing every file, held for review (the files are not open: the edits land on disk)."""
    for name in names():
        (workspace / name).write_text(original(name), encoding="utf-8")
    async with tool_server(folders=[workspace], sessions_dir=sessions, settings=REVIEW) as editor:
        editor.permission_answer = "always"
        writes = {"tools": [{"name": "write_file", "arguments": {"path": n, "content": changed(n)}} for n in names()]}
        sid, _ = await run_turn(editor, [writes, {"text": "done"}])
        hunks = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
        assert len(hunks) == 2 * FILES
    return sid


async def pending_after_restart(editor, workspace: Path, sid: str) -> list[dict]:
    """The hunks pending once the files are open again (a restarted server finds them in the buffers)."""
    for name in names():
        editor.open(workspace / name)
    hunks = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
    for name in names():
        editor.close(workspace / name)  # the next undo works on disk again
    return hunks


@pytest.mark.slow
async def test_kill_9_during_an_undo_of_reviewed_changes_leaves_no_file_half_undone(tmp_path: Path):
    outcomes = await kill_rounds(tmp_path, ROUNDS, SEED)
    assert "rolled back" in outcomes or "completed" in outcomes, outcomes


async def kill_rounds(tmp_path: Path, rounds: int, seed: int) -> list[str]:
    """`rounds` undos killed at random and checked after a restart (AssertionError
    naming the round otherwise); what became of each: "completed", "rolled back"
    (files put back and the user told) or "not started" (killed before any edit)."""
    rng = random.Random(seed)
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    sid = await make_session(workspace, sessions)
    before = state(workspace)
    undone = {name: original(name) for name in names()}
    pristine = tmp_path / "pristine"
    shutil.copytree(workspace, pristine / "ws")
    shutil.copytree(sessions, pristine / "sessions")
    outcomes: list[str] = []
    stack = AsyncExitStack()
    start = lambda: stack.enter_async_context(tool_server(folders=[workspace], sessions_dir=sessions, settings=REVIEW))  # noqa: E731
    editor = await start()
    try:
        for round_ in range(rounds):
            await pending_after_restart(editor, workspace, sid)  # found again, so they can be undone
            edits = len(editor.applied_edits)
            undo = asyncio.wrap_future(editor.client.protocol.send_request(
                "agent/review/resolve", {"sessionId": sid, "all": True, "action": "undo"}))
            undo.add_done_callback(lambda done: done.cancelled() or done.exception())  # the kill fails it: expected
            if round_ % 2 == 0:  # just after the editor applied the k-th file's undo
                at = edits + rng.randint(1, FILES + 2)
                await editor.wait_for(lambda: undo.done() or len(editor.applied_edits) >= at, what=f"edit {at}")
            else:  # a random moment of it, not a wait for it
                await editor.wait_for(lambda: undo.done() or len(editor.applied_edits) > edits, what="the first edit")
                await asyncio.sleep(rng.uniform(0.0, 0.3))
            await editor.kill()
            edited = len(editor.applied_edits) > edits
            await stack.aclose()
            stack = AsyncExitStack()
            editor = await start()
            events = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
            now = state(workspace)
            resolves = [e["data"] for e in events if e["type"] == "review/resolve"]
            pending = await pending_after_restart(editor, workspace, sid)
            if resolves:
                assert now == undone, f"round {round_}: the undo is recorded, but not every file is undone"
                assert sorted(Path(r["path"]).name for r in resolves) == names() and pending == []
                told = [m for e in events if e["type"] == "agent/inbox/spliced" for m in e["data"].get("inserted", ())
                        if m.get("source") == "review"]
                assert len(told) == FILES, f"round {round_}: the model is told of {len(told)} undone files"
                outcomes.append("completed")
                await stack.aclose()
                for path, copy in ((workspace, pristine / "ws"), (sessions, pristine / "sessions")):
                    shutil.rmtree(path)
                    shutil.copytree(copy, path)
                stack = AsyncExitStack()
                editor = await start()
                continue
            mixed = sorted(n for n in now if now[n] != before[n])
            assert not mixed, f"round {round_}: no undo is recorded, but these files were undone: {mixed}"
            assert len(pending) == 2 * FILES, f"round {round_}: {len(pending)} changes pending again"
            recovered = [e["data"] for e in events if e["type"] == "revert/recovered"]
            if edited:  # the user is told, by name, what was put back
                assert recovered and recovered[-1]["operation"] == "review-undo", f"round {round_}: not reported"
                assert recovered[-1]["outcome"] == "rolled-back"
                put_back = sorted(Path(p).name for p in recovered[-1]["paths"])
                assert put_back and set(put_back) <= set(names())
                warnings = [m.message for m in editor.client.messages]
                assert any("put back" in w and put_back[0] in w for w in warnings), warnings
            outcomes.append("rolled back" if edited else "not started")
        # an undo a crash put back can be run again, to the end
        await pending_after_restart(editor, workspace, sid)
        result = await editor.request("agent/review/resolve", {"sessionId": sid, "all": True, "action": "undo"})
        assert len(result["resolved"]) == 2 * FILES and result["skipped"] == []
        assert state(workspace) == undone
    finally:
        await stack.aclose()
    return outcomes


async def test_a_rewind_asked_during_an_undo_of_reviewed_changes_waits_for_it(tmp_path: Path):
    """One file operation of a session at a time: a rewind that reverts files,
    asked while the editor is applying an undo of reviewed changes, starts
    once the undo is recorded; nothing is left written down for a crash."""
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    files = names()[:3]
    for name in files:
        (workspace / name).write_text(original(name), encoding="utf-8")
    async with tool_server(folders=[workspace], sessions_dir=sessions, settings=REVIEW) as editor:
        editor.permission_answer = "always"
        writes = {"tools": [{"name": "write_file", "arguments": {"path": n, "content": changed(n)}} for n in files]}
        sid, _ = await run_turn(editor, [writes, {"text": "done"}])
        editor.hold_edits = asyncio.Event()  # the user looks at the first undo a while
        edits = len(editor.applied_edits)
        undo = asyncio.wrap_future(editor.client.protocol.send_request(
            "agent/review/resolve", {"sessionId": sid, "all": True, "action": "undo"}))
        await editor.wait_for(lambda: len(editor.applied_edits) > edits, what="the first undo edit")
        rewind = asyncio.wrap_future(editor.client.protocol.send_request(
            "agent/session/rewind", {"sessionId": sid, "turn": 1, "revertFiles": True}))
        await asyncio.sleep(0.3)
        assert not rewind.done() and len(editor.applied_edits) == edits + 1  # the rewind waits
        editor.hold_edits.set()
        await asyncio.wait_for(undo, 30)
        await asyncio.wait_for(rewind, 30)
        events = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
        kinds = [e["type"] for e in events if e["type"] in ("review/resolve", "session/rewind")]
        assert kinds == ["review/resolve"] * len(files) + ["session/rewind"]
        assert state_of(workspace, files) == {n: original(n) for n in files}
        assert not list(sessions.rglob("reverts/*.json"))


def state_of(workspace: Path, files: list[str]) -> dict[str, str]:
    return {name: (workspace / name).read_text(encoding="utf-8") for name in files}
