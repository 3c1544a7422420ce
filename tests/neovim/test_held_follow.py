"""A session another window has open is shown read-only as a snapshot, and
followed: the chat reads its log on while it shows it, so what a turn running
there adds, and that turn's end, show here without resuming it again; the
winbar says when it was read and that a turn runs there. The other window is
this test process: it holds the session's lock as the server does and
appends to the log as the server would."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nvim_harness import start_editor, stop_editor
from test_session_lock import hold_lock, winbar

pytest.importorskip("fcntl", reason="the session lock is flock-based here (Linux/macOS)")


def append(log: Path, *events: tuple[str, dict]) -> None:
    lines = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    seq = max(e["seq"] for e in lines) + 1
    with log.open("a") as f:
        for n, (kind, data) in enumerate(events):
            f.write(json.dumps({"seq": seq + n, "time": 0, "type": kind, "data": data}) + "\n")


def test_a_held_session_is_followed_until_its_turn_ends_and_it_is_let_go(
    workspace: Path, sessions_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = start_editor(workspace, tmp_path / "home1", monkeypatch)
    try:
        first.setup([{"text": "First answer."}], sessions_dir)
        first.edit("a.py")
        first.wait_attached()
        first.cmd("AgentAsk hello")
        first.wait_idle()
        session_id = first.lua("return T.session().id")
    finally:
        stop_editor(first, wait_for_server=True)
    [log] = sessions_dir.rglob(f"{session_id}.jsonl")
    fd = hold_lock(log.with_suffix(".lock"))
    # the other window starts a second turn
    append(log, ("user/message", {"message": {"role": "user", "id": "m2", "source": "user",
                                              "content": [{"type": "text", "text": "and more"}]}}),
           ("turn/start", {"turn": 2}))

    second = start_editor(workspace, tmp_path / "home2", monkeypatch)
    try:
        second.setup([], sessions_dir)
        second.lua("local f = require('agent_lsp.held_follow') f.RUNNING_MS, f.IDLE_MS = 200, 600")
        second.edit("a.py")
        second.wait_attached()
        second.cmd(f"AgentResume {session_id}")
        second.wait("T.session() ~= nil and T.session().held_by ~= nil", what="the read-only snapshot")
        assert "and more" in second.chat_text()
        bar = winbar(second)
        assert bar.startswith(f" read-only (open in pid {os.getpid()}) as of ") and ", running there" in bar, bar

        # the other window's turn answers and ends: shown here as it comes
        append(log, ("assistant/chunk", {"chunk": {"type": "text-start"}}),
               ("assistant/chunk", {"chunk": {"type": "text-delta", "text": "Second answer there."}}),
               ("assistant/chunk", {"chunk": {"type": "text-end"}}),
               ("assistant/message", {"message": {"role": "assistant", "id": "a2",
                                                       "content": [{"type": "text", "text": "Second answer there."}]}}),
               ("turn/end", {"turn": 2, "reason": {"kind": "completed"}}))
        second.wait("T.chat_text():find('Second answer there.', 1, true) ~= nil", what="the other window's answer")
        second.wait("not require('agent_lsp.chat').winbar_text(T.session()):find('running there', 1, true)",
                    what="the winbar to say the turn there ended")

        # the other window lets it go: ours to continue
        os.close(fd)
        fd = None
        second.wait("T.session().held_by == nil", what="the session to be ours")
        assert "read-only" not in winbar(second)
        assert second.errors() == []
    finally:
        if fd is not None:
            os.close(fd)
        stop_editor(second)
