"""The agent host: every editor window that launches `agent-lsp --host` is served
by one warm process per user, each window with its own protocol state.

Real processes throughout: pytest-lsp launches `agent-lsp --host` (the
connector) as an editor does; the first one starts the host."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agent_lsp.lsp.protocol import SESSION_IN_USE_CODE

from lsp_harness import NEVER, running_server, wait_until

CONNECTOR = [sys.executable, "-m", "agent_lsp", "--host"]


def host_pid(socket_file: Path) -> int | None:
    try:
        return int((socket_file.with_name(socket_file.name + ".lock")).read_text().strip())
    except (OSError, ValueError):
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours is not alive
        with open(f"/proc/{pid}/stat") as stat_file:
            return stat_file.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


@pytest.fixture
def host_dir(tmp_path):
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    yield directory
    pid = host_pid(directory / "host.sock")
    if pid is not None and alive(pid):
        os.kill(pid, signal.SIGKILL)


def host_env(directory: Path, idle_s: float = 60) -> dict[str, str]:
    return {"AGENT_LSP_HOST_SOCKET": str(directory / "host.sock"), "AGENT_LSP_HOST_IDLE_S": str(idle_s)}




async def test_two_windows_share_one_warm_host_each_with_its_own_state(tmp_path, host_dir):
    sessions = tmp_path / "sessions"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("first\n")
    env = host_env(host_dir)
    script_a = [{"tools": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "from A\n"}}]}, {"text": "wrote"}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script_a, env=env, command=CONNECTOR) as first:
        pid = host_pid(host_dir / "host.sock")
        assert pid is not None and alive(pid) and pid != first.server_pid  # the connector is not the host
        sid_a = (await first.request("agent/followup", {"content": "write"}))["sessionId"]
        await first.wait_idle(sid_a)
        assert first.applied_edits, "the edit reached the window that asked, as workspace/applyEdit"
        assert first.streamed_text(sid_a).endswith("wrote")

        other = tmp_path / "other"
        other.mkdir()
        started = time.monotonic()
        async with running_server(folders=[other], sessions_dir=sessions, script=[{"text": "from B"}], env=env,
                                  command=CONNECTOR) as second:
            warm_start = time.monotonic() - started
            assert host_pid(host_dir / "host.sock") == pid  # the same host
            sid_b = (await second.request("agent/followup", {"content": "hi"}))["sessionId"]
            await second.wait_idle(sid_b)
            assert second.streamed_text(sid_b) == "from B"
            # each window sees only its own folder's sessions and its own events
            assert [s["sessionId"] for s in (await second.request("agent/session/list", {}))["sessions"]] == [sid_b]
            assert sid_b not in first.events and sid_a not in second.events
            assert not second.applied_edits
        # the second window left (shutdown, exit): the host and the first window go on
        assert alive(pid)
        statuses = len(first.statuses)
        await first.request("agent/followup", {"sessionId": sid_a, "content": "again"})
        await first.wait_idle(sid_a, statuses)
    assert warm_start < 5.0  # a warm host answers `initialize` without loading anything (figures: bench/)


def seqs(events: list[dict]) -> list[int]:
    return [e["seq"] for e in events]


def contiguous(events: list[dict]) -> bool:
    """Every seq once, in order (a merged chunk stands for the seqs up to its lastSeq)."""
    expected = events[0]["seq"]
    for event in events:
        if event["seq"] != expected:
            return False
        expected = event.get("lastSeq", event["seq"]) + 1
    return True


async def test_a_session_open_in_one_window_is_followed_live_in_another(tmp_path, host_dir):
    """The second window sees the first one's running turn as it streams, with the
    same seqs; its followup reaches the same agent, and both windows see it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    env = host_env(host_dir)
    script = [{"text": "streaming to both windows", "chunkDelayMs": 40}, {"text": "second answer"}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script, env=env,
                              command=CONNECTOR) as first:
        sid = (await first.request("agent/followup", {"content": "hi"}))["sessionId"]
        await wait_until(lambda: first.streamed_text(sid), what="the first chunk")
        async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "unused"}], env=env,
                                  command=CONNECTOR) as second:
            loaded = await second.request("agent/session/load", {"sessionId": sid})
            assert loaded["status"] == "running" and "heldByPid" not in loaded  # live, not a read-only snapshot
            await second.wait_idle(sid)
            await first.wait_idle(sid)
            seen_by_second = loaded["events"] + second.events[sid]
            assert seen_by_second[0]["seq"] == 0 and contiguous(seen_by_second)  # nothing lost, nothing twice
            assert second.events[sid][-1] == first.events[sid][-1]  # the same events, the same seqs
            assert first.streamed_text(sid) == "streaming to both windows"
            assert second.streamed_text(sid) and "streaming to both windows".endswith(second.streamed_text(sid))
            # the second window's prompt reaches the same agent; both windows see the answer
            first_statuses, second_statuses = len(first.statuses), len(second.statuses)
            await second.request("agent/followup", {"sessionId": sid, "content": "from the second window"})
            await second.wait_idle(sid, second_statuses)
            await first.wait_idle(sid, first_statuses)
            assert first.streamed_text(sid).endswith("second answer")
            assert second.streamed_text(sid).endswith("second answer")
            with pytest.raises(JsonRpcException) as refused:  # deleting stays the opening window's
                await second.request("agent/session/delete", {"sessionId": sid})
            assert refused.value.code == SESSION_IN_USE_CODE
            # both windows are told the session is open in two windows
            assert first.of("agent/session/presence")[-1] == {"sessionId": sid, "windows": 2}
            assert second.of("agent/session/presence")[-1] == {"sessionId": sid, "windows": 2}
        # the second window left: the first is told it is alone again
        await wait_until(lambda: first.of("agent/session/presence")[-1]["windows"] == 1, what="presence 1")


async def test_a_question_is_asked_in_every_window_following_the_session_and_the_first_answer_wins(tmp_path, host_dir):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    env = host_env(host_dir)
    script = [{"text": "first"},
              {"tools": [{"name": "run_command", "arguments": {"command": "echo ran >> ran.txt"}}]}, {"text": "done"}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script, env=env,
                              command=CONNECTOR) as first:
        first.permission_answer = NEVER  # the user is not at this window
        sid = (await first.request("agent/followup", {"content": "hi"}))["sessionId"]
        await first.wait_idle(sid)
        async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "unused"}], env=env,
                                  command=CONNECTOR) as second:
            await second.request("agent/session/load", {"sessionId": sid})
            statuses = len(second.statuses)
            await second.request("agent/followup", {"sessionId": sid, "content": "run it"})
            await second.wait_idle(sid, statuses)
            assert (workspace / "ran.txt").read_text() == "ran\n"  # answered in the second window, run once
            asked_first, asked_second = first.permission_requests[-1], second.permission_requests[-1]
            assert asked_first["permissionId"] == asked_second["permissionId"]
            # the first window is told the question was answered elsewhere, so its card goes away
            answered = await wait_until(lambda: first.of("agent/permission/answered"), what="the answered notice")
            assert answered[-1]["permissionId"] == asked_first["permissionId"] and answered[-1]["answer"] == "once"
            assert not second.of("agent/permission/answered")


async def test_the_turn_goes_on_when_the_window_that_opened_it_leaves(tmp_path, host_dir):
    """A window that leaves never ends a turn another window follows: its edit
    reaches the window that stayed, as workspace/applyEdit."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("old\n")
    sessions = tmp_path / "sessions"
    env = host_env(host_dir)
    script = [{"text": "working slowly before the edit", "chunkDelayMs": 60,
               "tools": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}]},
              {"text": "done"}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "unused"}], env=env,
                              command=CONNECTOR) as second:
        async with running_server(folders=[workspace], sessions_dir=sessions, script=script, env=env,
                                  command=CONNECTOR) as first:
            sid = (await first.request("agent/followup", {"content": "edit it"}))["sessionId"]
            await wait_until(lambda: first.streamed_text(sid), what="the first chunk")
            await second.request("agent/session/load", {"sessionId": sid})
        # the first window has left (shutdown, exit) in the middle of the turn
        await second.wait_idle(sid)
        assert second.streamed_text(sid).endswith("done")
        assert second.event_types(sid)[-1] == "turn/end"
        assert second.applied_edits, "the edit went through the window that stayed"
        assert (workspace / "notes.txt").read_text() == "new\n"
        # nobody else has the session now: the window that stayed goes on in it
        statuses = len(second.statuses)
        second.use_script([{"text": "continued"}])  # its own settings: the session moved to its own host
        await second.request("agent/followup", {"sessionId": sid, "content": "and now?"})
        await second.wait_idle(sid, statuses)
        assert second.streamed_text(sid).endswith("continued")
        events = second.events[sid]
        assert contiguous(events)  # on from the seq it had seen, through the move to its own host


async def test_an_idle_host_stops_and_the_next_window_starts_a_new_one(tmp_path, host_dir):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    socket_file = host_dir / "host.sock"
    env = host_env(host_dir, idle_s=1)
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=[{"text": "x"}], env=env,
                              command=CONNECTOR):
        pid = host_pid(socket_file)
        assert stat.S_IMODE(socket_file.stat().st_mode) == 0o600
    await wait_until(lambda: not alive(pid), timeout=15, what="the idle host to stop")
    assert not socket_file.exists()
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=[{"text": "y"}], env=env,
                              command=CONNECTOR) as window:
        assert host_pid(socket_file) not in (None, pid)
        sid = (await window.request("agent/followup", {"content": "hi"}))["sessionId"]
        await window.wait_idle(sid)


async def test_a_killed_host_ends_its_windows_and_the_next_window_starts_a_new_one(tmp_path, host_dir):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    socket_file = host_dir / "host.sock"
    env = host_env(host_dir)
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=[{"text": "x"}], env=env,
                              command=CONNECTOR, graceful=False) as window:
        pid = host_pid(socket_file)
        os.kill(pid, signal.SIGKILL)
        # the editor sees its server end (and restarts it, as editors do)
        code = await asyncio.wait_for(window.client._server.wait(), 10)
        assert code == 0
        window.killed = True
    assert socket_file.exists()  # left behind by the killed host
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=[{"text": "y"}], env=env,
                              command=CONNECTOR) as window:
        assert host_pid(socket_file) not in (None, pid)
        sid = (await window.request("agent/followup", {"content": "hi"}))["sessionId"]
        await window.wait_idle(sid)
        assert window.streamed_text(sid) == "y"


def test_the_host_refuses_a_directory_other_users_may_enter(tmp_path):
    directory = tmp_path / "open"
    directory.mkdir()
    directory.chmod(0o755)
    env = dict(os.environ, AGENT_LSP_HOST_SOCKET=str(directory / "host.sock"))
    result = subprocess.run(CONNECTOR, input=b"", capture_output=True, env=env, timeout=30)
    assert result.returncode == 1
    assert b"may be entered by other users" in result.stderr and b"Traceback" not in result.stderr
    assert not (directory / "host.sock").exists()


def test_a_connection_from_another_installation_is_refused_with_the_reason(tmp_path, host_dir):
    """A connector of another release that finds this host's socket is told why, not served."""
    import socket as sockets

    env = dict(os.environ, **host_env(host_dir))
    started = subprocess.run(CONNECTOR, input=b"", capture_output=True, env=env, timeout=60)
    assert started.returncode == 0  # the host started and the empty session ended
    client = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    client.connect(str(host_dir / "host.sock"))
    client.sendall(b'{"face": "lsp", "tag": "0.0.0-other", "env": {}}\n')
    answer = client.recv(4096)
    client.close()
    assert b"this host runs agent-lsp" in answer and b'"error"' in answer


async def test_a_host_killed_mid_turn_is_repaired_and_the_next_window_goes_on_from_what_it_had(tmp_path, host_dir):
    """kill -9 of the host in the middle of a turn: the session's file is repaired
    on the next load, what the window had seen is there unchanged, with nothing
    doubled, and the session goes on in a new host."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    socket_file = host_dir / "host.sock"
    env = host_env(host_dir)
    script = [{"text": "a long answer that is cut short by the crash", "chunkDelayMs": 50}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script, env=env,
                              command=CONNECTOR, graceful=False) as window:
        sid = (await window.request("agent/followup", {"content": "hi"}))["sessionId"]
        await wait_until(lambda: len(window.streamed_text(sid)) > 5, what="some chunks")
        seen = list(window.events[sid])
        os.kill(host_pid(socket_file), signal.SIGKILL)
        await asyncio.wait_for(window.client._server.wait(), 10)
        window.killed = True
    async with running_server(folders=[workspace], sessions_dir=sessions, script=[{"text": "after the crash"}],
                              env=env, command=CONNECTOR) as again:
        loaded = (await again.request("agent/session/load", {"sessionId": sid}))
        events = loaded["events"]
        assert loaded["status"] == "idle"
        assert seqs(events) == list(range(len(events)))  # nothing doubled, nothing missing
        by_seq = {e["seq"]: e for e in events}
        for event in seen:  # what the window had seen is there as it was
            assert by_seq[event["seq"]]["type"] == event["type"]
        types_ = [e["type"] for e in events]
        assert "turn/end" in types_[max(i for i, t in enumerate(types_) if t == "turn/start"):]  # the cut turn ended on load
        statuses = len(again.statuses)
        await again.request("agent/followup", {"sessionId": sid, "content": "go on"})
        await again.wait_idle(sid, statuses)
        assert again.streamed_text(sid).endswith("after the crash")


def test_agent_lsp_run_goes_through_the_host_and_a_second_run_finds_it_warm(tmp_path, host_dir):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = json.dumps({"model": {"provider": "scripted", "script": [{"text": "answered by the host"}]},
                           "sessionsDir": str(tmp_path / "sessions")})
    (tmp_path / "config.toml").write_text("")
    env = dict(os.environ, **host_env(host_dir), AGENT_LSP_CONFIG=str(tmp_path / "config.toml"))
    command = [sys.executable, "-m", "agent_lsp", "run", "hi", "--host", "--workspace", str(workspace), "--settings", settings]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "answered by the host" in first.stdout
    pid = host_pid(host_dir / "host.sock")
    assert pid is not None and alive(pid)  # the host stays for the next one
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0 and "answered by the host" in second.stdout
    assert host_pid(host_dir / "host.sock") == pid


async def test_each_window_s_commands_get_its_own_editor_s_environment(tmp_path, host_dir):
    """Two windows started from different environments (another virtualenv, another PATH):
    the agent's commands in each see their own window's, not the host's."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    script = [{"tools": [{"name": "run_command", "arguments": {"command": "echo mark=$WINDOW_MARK"}}]}, {"text": "done"}]
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script,
                              env=dict(host_env(host_dir), WINDOW_MARK="first"), command=CONNECTOR) as first:
        async with running_server(folders=[workspace], sessions_dir=sessions, script=script,
                                  env=dict(host_env(host_dir), WINDOW_MARK="second"), command=CONNECTOR) as second:
            for window, mark in ((second, "second"), (first, "first")):
                sid = (await window.request("agent/followup", {"content": "run it"}))["sessionId"]
                await window.wait_idle(sid)
                results = [e for e in window.events[sid] if e["type"] == "tool/result"]
                assert f"mark={mark}" in json.dumps(results[-1]["data"]), results[-1]
