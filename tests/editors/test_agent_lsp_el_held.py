"""editors/emacs/agent-lsp.el in a real Emacs (batch): a session another
window has open is shown read-only as a snapshot that says so, and followed:
what a turn running there adds, and its end, show in the chat as they come,
and once that window lets the session go, a line says it is yours. The other
window is this test: it holds the session's lock as the server does and
appends to the log as the server would."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from emacs_batch import needs_eglot
from test_agent_lsp_el import run_package

fcntl = pytest.importorskip("fcntl", reason="the session lock is flock-based here (Linux/macOS)")

pytestmark = needs_eglot


def append(log: Path, *events: tuple[str, dict]) -> None:
    seq = max(json.loads(line)["seq"] for line in log.read_text().splitlines()[1:]) + 1
    with log.open("a") as f:
        for n, (kind, data) in enumerate(events):
            f.write(json.dumps({"seq": seq + n, "time": 0, "type": kind, "data": data}) + "\n")


def test_a_held_session_is_followed_until_it_is_let_go(tmp_path: Path):
    run_package(tmp_path / "first", [{"text": "First answer."}], [["ask", "hello"], ["wait", "— turn 1 completed"]],
                settings={"sessionsDir": str(tmp_path / "sessions")})
    (log,) = (tmp_path / "sessions").rglob("*.jsonl")
    fd = os.open(log.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid()}).encode())
    append(log, ("user/message", {"message": {"role": "user", "id": "m2", "source": "user",
                                              "content": [{"type": "text", "text": "and more"}]}}),
           ("turn/start", {"turn": 2}))

    shown, followed = tmp_path / "shown", tmp_path / "followed"

    def wait_for(path: Path) -> None:
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def other_window() -> None:  # once the snapshot shows: the turn there ends, then the window lets go
        wait_for(shown)
        append(log, ("assistant/chunk", {"chunk": {"type": "text-start"}}),
               ("assistant/chunk", {"chunk": {"type": "text-delta", "text": "Second answer there."}}),
               ("assistant/chunk", {"chunk": {"type": "text-end"}}),
               ("turn/end", {"turn": 2, "reason": {"kind": "completed"}}))
        wait_for(followed)
        os.close(fd)

    threading.Thread(target=other_window, daemon=True).start()
    agent, _ = run_package(tmp_path / "second", [], [
        ["set", "agent-lsp-held-running-seconds", 0.5], ["set", "agent-lsp-held-idle-seconds", 1],
        ["resume", "hello"],
        ["wait", "of a session open in another window (pid"],
        ["touch", str(shown)],
        ["wait", "Agent: Second answer there."],
        ["wait", "— turn 2 completed"],
        ["touch", str(followed)],
        ["wait", "— the other window let this session go: yours to continue"],
    ], settings={"sessionsDir": str(tmp_path / "sessions")}, workspace=tmp_path / "first" / "project")
    lines = agent.splitlines()
    assert "You: and more" in lines
    assert any(line.startswith("— a snapshot as of ") and "where a turn is running" in line for line in lines), agent
