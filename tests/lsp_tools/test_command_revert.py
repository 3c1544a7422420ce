"""Turn revert undoes what shell commands changed, through the real server.

A turn's `run_command` changes files with `sed -i`, creates and deletes
some; the user then edits other lines; revert puts back the command's
changes, keeps the user's, says file by file what it did, and never touches
the user's git repository.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tools_harness import call, is_error, run_turn, tool_server

pytestmark = pytest.mark.asyncio


def _lines(n: int, word: str = "line") -> str:
    return "".join(f"{word} {i}\n" for i in range(1, n + 1))


async def test_revert_undoes_a_sed_command_and_keeps_the_users_line(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    original = _lines(20)
    target = workspace / "config.txt"
    target.write_text(original, encoding="utf-8")
    (workspace / "old.txt").write_text("old\n", encoding="utf-8")
    (workspace / ".gitignore").write_text("build/\n", encoding="utf-8")
    (workspace / "build").mkdir()
    git_before = sorted(p.relative_to(workspace) for p in (workspace / ".git").rglob("*"))
    command = ("sed -i 's/^line 3$/sed 3/' config.txt && echo made > new.txt && rm old.txt"
               " && echo out > build/ignored.txt")
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        editor.permission_answer = "always"
        sid, results = await run_turn(editor, [call("run_command", command=command), {"text": "done"}])
        assert not is_error(results[0])
        assert target.read_text(encoding="utf-8") == original.replace("line 3\n", "sed 3\n")
        assert sorted(results[0]["meta"]["changedFiles"]) == ["config.txt", "new.txt", "old.txt"]
        # the user edits another line of the file the command changed
        target.write_text(target.read_text(encoding="utf-8").replace("line 15\n", "user 15\n"), encoding="utf-8")

        report = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})

        paths = {name: str((workspace / name).resolve()) for name in ("config.txt", "new.txt", "old.txt")}
        assert sorted(report["reverted"]) == sorted(paths.values())
        assert report["skipped"] == []
        assert target.read_text(encoding="utf-8") == original.replace("line 15\n", "user 15\n")
        assert not (workspace / "new.txt").exists()
        assert (workspace / "old.txt").read_text(encoding="utf-8") == "old\n"
        # an ignored file is not recorded (a documented limit): it stays as the command left it
        assert (workspace / "build" / "ignored.txt").read_text(encoding="utf-8") == "out\n"
    # the user's repository was not touched: no object, index or ref was written
    assert sorted(p.relative_to(workspace) for p in (workspace / ".git").rglob("*")) == git_before


async def test_a_command_change_the_user_rewrote_is_left_alone_after_a_restart(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    original = _lines(10)
    target = workspace / "f.txt"
    target.write_text(original, encoding="utf-8")
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        editor.permission_answer = "always"
        sid, results = await run_turn(
            editor, [call("run_command", command="sed -i 's/^line 2$/sed 2/; s/^line 8$/sed 8/' f.txt"), {"text": "ok"}]
        )
        assert not is_error(results[0])
    # between server runs, the user rewrites one of the lines the command changed
    target.write_text(target.read_text(encoding="utf-8").replace("sed 8\n", "user 8\n"), encoding="utf-8")
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        report = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
        f = str(target.resolve())
        assert report["reverted"] == [f]
        assert report["skipped"] == [{"path": f, "reason": "1 of 2 changes were edited since; left as they are"}]
        assert target.read_text(encoding="utf-8") == original.replace("line 8\n", "user 8\n")
