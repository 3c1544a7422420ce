"""A session open in another agent-lsp process (another editor window on the
same folder) is read-only here: resumed as a snapshot with a one-line notice,
"read-only" in the winbar, and asking explains once how to go on (:AgentNew).
The other process is real: it holds the session's lock file exactly as the
server does (an exclusive flock, its pid in the file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nvim_harness import Editor, start_editor, stop_editor

fcntl = pytest.importorskip("fcntl", reason="the session lock is flock-based here (Linux/macOS)")


def hold_lock(lock_path: Path) -> int:
    """Take the session's lock for this (test) process; closing the fd drops it."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid()}).encode())
    return fd


def warnings(editor: Editor) -> list[str]:
    return editor.lua("return vim.tbl_map(function(n) return n.msg end, "
                      "vim.tbl_filter(function(n) return n.level == vim.log.levels.WARN end, _G.test_notes))")


def winbar(editor: Editor) -> str:
    return editor.lua("return require('agent_lsp.chat').winbar_text(T.session())")


def test_a_session_held_by_another_process_is_read_only_until_it_is_released(
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
    notice = (f"agent_lsp: session is open in another window (pid {os.getpid()}) — read-only here; "
              ":AgentNew starts a new session to continue")

    second = start_editor(workspace, tmp_path / "home2", monkeypatch)
    try:
        second.setup([{"text": "Second answer."}], sessions_dir)
        second.edit("a.py")
        second.wait_attached()
        second.cmd(f"AgentResume {session_id}")
        second.wait("T.session() ~= nil and T.session().held_by ~= nil", what="the read-only snapshot")
        assert "First answer." in second.chat_text()
        assert warnings(second) == [notice]
        assert winbar(second).startswith(f" read-only (open in pid {os.getpid()})")
        assert second.lua("return require('agent_lsp').status()") == "agent idle (read-only)"

        # Asking says once why not and how to go on; nothing reaches the session.
        events = second.lua("return #T.session().events")
        second.cmd("AgentAsk more please")
        second.cmd("AgentAsk")  # without text: no input window for it either
        assert warnings(second) == [notice] * 3
        assert second.lua("return vim.bo.buftype") == ""
        # A request the server refuses (-32010) gives the same one line, not an error.
        second.cmd("AgentCancel")
        second.wait("#vim.tbl_filter(function(n) return n.level == vim.log.levels.WARN end, _G.test_notes) == 4",
                    what="the refused cancel")
        assert warnings(second)[-1] == notice
        assert second.errors() == []
        assert second.lua("return #T.session().events") == events

        # :AgentNew continues in a new session.
        second.cmd("AgentNew")
        second.wait(f"T.session() ~= nil and T.session().id ~= '{session_id}'", what="the new session")
        assert "read-only" not in winbar(second)

        # The other process lets go: the session is ours again.
        os.close(fd)
        fd = None
        second.cmd(f"AgentResume {session_id}")
        second.wait(f"T.session() ~= nil and T.session().id == '{session_id}' and T.session().held_by == nil",
                    what="the session to load as ours")
        assert "read-only" not in winbar(second)
        second.cmd("AgentAsk more please")
        second.wait("T.chat_text():find('Second answer.', 1, true) ~= nil", what="the answer in the old session")
        assert second.errors() == []
    finally:
        if fd is not None:
            os.close(fd)
        stop_editor(second)
