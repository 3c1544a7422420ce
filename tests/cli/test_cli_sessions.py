"""`agent-lsp sessions`: list, show and delete what `run` stored."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agent_lsp.cli.client import HeadlessClient
from agent_lsp.cli.sessions import delete_session, show_session
from agent_lsp.cli.transcript import Transcript

from cli_helpers import agent_lsp, clean_env


def test_sessions_lists_what_run_stored(tmp_path: Path, workspace: Path):
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    ran = agent_lsp(["run", "remember the milk", "-w", str(workspace)], env)
    assert ran.returncode == 0, ran.stderr
    session_id = re.search(r"session (s_\S+)", ran.stderr).group(1)

    listed = agent_lsp(["sessions", "-w", str(workspace)], env)
    assert listed.returncode == 0, listed.stderr
    (row,) = [line for line in listed.stdout.splitlines() if line.startswith(session_id)]
    assert "remember the milk" in row
    stored_in = Path(listed.stderr.split("stored in ", 1)[1].strip())
    assert (stored_in / f"{session_id}.jsonl").is_file()


async def test_show_then_delete(tmp_path: Path, workspace: Path):
    settings = {"sessionsDir": str(tmp_path / "sessions")}
    live = Transcript(out=io.StringIO(), err=io.StringIO(), color=False)
    async with HeadlessClient(workspace, settings=settings, transcript=live, env=clean_env(tmp_path)) as client:
        turn = await asyncio.wait_for(client.followup("remember the milk"), 20)
        session_id = turn.session_id

        replay = Transcript(out=io.StringIO(), err=io.StringIO(), color=False, show_user=True)
        client.transcript = replay
        assert await show_session(client, session_id) == 0
        shown = replay.out.getvalue()
        assert "> remember the milk\n(scripted model) You said: remember the milk\n" in shown
        (log_line,) = [line for line in shown.splitlines() if line.startswith("log: ")]
        log_file = Path(log_line[len("log: "):])
        assert log_file.is_file() and log_file.name == f"{session_id}.jsonl"

        assert await delete_session(client, session_id) == 0
        assert not log_file.exists()
        with pytest.raises(JsonRpcException, match=session_id):
            await show_session(client, session_id)


def test_show_needs_an_id(tmp_path: Path, workspace: Path):
    done = agent_lsp(["sessions", "show", "-w", str(workspace)], clean_env(tmp_path))
    assert done.returncode == 2


async def test_a_session_open_in_another_window_is_shown_read_only_and_not_continued(tmp_path: Path, workspace: Path):
    """Another editor window's server has the session open: `sessions show` shows it
    read-only, `run --session` and `sessions delete` refuse, naming that process
(tests/lsp/test_lsp_two_servers.py: the session is free again once that server exits)."""
    settings = {"sessionsDir": str(tmp_path / "sessions")}
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    live = Transcript(out=io.StringIO(), err=io.StringIO(), color=False)
    async with HeadlessClient(workspace, settings=settings, transcript=live, env=clean_env(tmp_path)) as window:
        session_id = (await asyncio.wait_for(window.followup("remember the milk"), 20)).session_id
        pid = window._rpc._server.pid
        shown = await asyncio.to_thread(agent_lsp, ["sessions", "show", session_id, "-w", str(workspace)], env)
        assert shown.returncode == 0, shown.stderr
        assert "read-only" in shown.stdout and "remember the milk" in shown.stdout
        for args in (["run", "more", "--session", session_id], ["sessions", "delete", session_id]):
            refused = await asyncio.to_thread(agent_lsp, [*args, "-w", str(workspace)], env)
            assert refused.returncode == 1
            assert f"session {session_id} is open in another agent-lsp process" in refused.stderr
            assert f"process {pid} " in refused.stderr


def test_export_writes_the_session_as_markdown(tmp_path: Path, workspace: Path):
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    ran = agent_lsp(["run", "remember the milk", "-w", str(workspace)], env)
    assert ran.returncode == 0, ran.stderr
    session_id = re.search(r"session (s_\S+)", ran.stderr).group(1)

    target = tmp_path / "milk.md"
    exported = agent_lsp(["sessions", "export", session_id, "-o", str(target), "-w", str(workspace)], env)
    assert exported.returncode == 0, exported.stderr
    assert target.read_text(encoding="utf-8") == (
        f"# remember the milk\n\nSession `{session_id}`\n\n## You\n\nremember the milk\n\n"
        "## Agent\n\n(scripted model) You said: remember the milk\n")

    to_stdout = agent_lsp(["sessions", "export", session_id, "-w", str(workspace)], env)
    assert to_stdout.returncode == 0 and to_stdout.stdout == target.read_text(encoding="utf-8")
    unknown = agent_lsp(["sessions", "export", "s_nope", "-w", str(workspace)], env)
    assert unknown.returncode == 1 and "s_nope" in unknown.stderr and "Traceback" not in unknown.stderr
