"""What must outlive a server (grants, revert) and what must not (shell commands)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from pathlib import Path

import psutil

from agent_lsp.agent.history import derive_messages
from agent_lsp.agent.invariants import log_violations
from agent_lsp.store import SessionStore
from agent_lsp.workspace.session_location import folder_key
from tools_harness import call, is_error, run_turn, text_of, tool_server, wait_until


SLEEPS = (["sleep", "30.75"], ["sleep", "31.75"])  # the long command's processes, by command line


def _command_running() -> bool:
    """Any process of the long command alive (found by command line: in the sandbox, the
    pids the command sees are its own)."""
    return any(p.info["cmdline"] in SLEEPS and p.info["status"] != psutil.STATUS_ZOMBIE
               for p in psutil.process_iter(["cmdline", "status"]))


async def test_an_always_grant_is_kept_for_other_sessions_and_after_a_restart(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        editor.permission_answer = "always"
        _, results = await run_turn(editor, [call("run_command", command="echo granted"), {"text": "ok"}])
        assert not is_error(results[0]) and len(editor.permission_requests) == 1
        editor.permission_answer = "deny"  # would deny if asked again
        _, results = await run_turn(editor, [call("run_command", command="echo granted"), {"text": "ok"}])  # a new session
        assert not is_error(results[0]) and len(editor.permission_requests) == 1
        _, results = await run_turn(editor, [call("run_command", command="echo other"), {"text": "ok"}])
        assert len(editor.permission_requests) == 2 and is_error(results[0])  # the grant is for that command only
    stored = json.loads((sessions / folder_key(workspace) / "permissions.json").read_text())
    assert {"tool": "run_command", "action": "allow", "commandPrefix": "echo granted"} in stored["rules"]

    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        editor.permission_answer = "deny"
        _, results = await run_turn(editor, [call("run_command", command="echo granted"), {"text": "ok"}])
        assert not is_error(results[0]) and "granted" in text_of(results[0])
        assert editor.permission_requests == []


async def test_a_turn_is_reverted_after_a_server_restart(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    original = "".join(f"line {i}\n" for i in range(1, 31))
    (workspace / "f.txt").write_text(original, encoding="utf-8")
    (workspace / "gone.txt").write_text("keep me\n", encoding="utf-8")
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        sid, results = await run_turn(
            editor,
            [
                call("edit_file", path="f.txt", edits=[
                    {"oldText": "line 2\n", "newText": "agent 2\n"}, {"oldText": "line 25\n", "newText": "agent 25\n"},
                ]),
                call("create_file", path="made.txt", content="made\n"),
                call("delete_file", path="gone.txt"),
                {"text": "done"},
            ],
        )
        assert not any(is_error(r) for r in results)
    # between the runs, the user edits the file elsewhere and rewrites one of the agent's lines
    edited = (workspace / "f.txt").read_text(encoding="utf-8")
    edited = "# header\n" + edited.replace("line 12\n", "user 12\n").replace("agent 25\n", "user 25\n")
    (workspace / "f.txt").write_text(edited, encoding="utf-8")

    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        report = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
        f = str((workspace / "f.txt").resolve())
        assert sorted(report["reverted"]) == sorted([f, str((workspace / "made.txt").resolve()), str((workspace / "gone.txt").resolve())])
        assert report["skipped"] == [{"path": f, "reason": "1 of 2 changes were edited since; left as they are"}]
        expected = "# header\n" + original.replace("line 12\n", "user 12\n").replace("line 25\n", "user 25\n")
        assert (workspace / "f.txt").read_text(encoding="utf-8") == expected
        assert not (workspace / "made.txt").exists()
        assert (workspace / "gone.txt").read_text(encoding="utf-8") == "keep me\n"
        # reverted once: a second revert does nothing and says so
        again = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
        assert again["reverted"] == [] and again["skipped"]
        (reason,) = {s["reason"] for s in again["skipped"]}
        assert re.fullmatch(r"turn 1 was already reverted at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", reason)
        assert sorted(s["path"] for s in again["skipped"]) == sorted(report["reverted"])
        # the revert is in the session log, where clients see it and the model does not
        events = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
        (revert,) = [e for e in events if e["type"] == "turn/revert"]
        assert revert["data"] == {"turn": 1, "reverted": report["reverted"], "skipped": report["skipped"]}
        assert "surfaceOp" not in revert["data"]
    # the user makes the files the agent had made and deleted again
    (workspace / "made.txt").write_text("made\n", encoding="utf-8")
    (workspace / "gone.txt").unlink()

    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        # after a restart too: nothing is reverted again (the created file is not deleted)
        after_restart = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
        assert after_restart == again
        assert (workspace / "made.txt").read_text(encoding="utf-8") == "made\n"
        assert not (workspace / "gone.txt").exists()
        assert (workspace / "f.txt").read_text(encoding="utf-8") == expected
    session = SessionStore(sessions / folder_key(workspace)).load(sid)
    assert log_violations(session.events) == []
    assert not any("revert" in json.dumps(m) for m in derive_messages(session))


async def _start_long_command(editor, pids: Path) -> None:
    editor.permission_answer = "once"
    command = f"echo $$ > {pids}; sleep 30.75 & echo $! >> {pids}; echo started; sleep 31.75"
    editor.use_script([call("run_command", command=command)])
    await editor.request("agent/followup", {"content": "run"})
    await wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 2, what="the command to start")
    # its output streamed: the server is reading it (the command is registered as running)
    await wait_until(lambda: any("started" in p["data"].get("text", "") for p in editor.of("agent/tool/progress")), what="output")


async def test_sigterm_to_the_server_kills_its_running_command(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    pids = tmp_path / "pids.txt"
    async with tool_server(folders=[workspace], sessions_dir=sessions, graceful=False) as editor:
        await _start_long_command(editor, pids)
        server = psutil.Process(editor.server_pid)
        os.kill(editor.server_pid, signal.SIGTERM)
        await asyncio.to_thread(server.wait, 10)
    await wait_until(lambda: not _command_running(), timeout=5, what="the command's processes to end")


async def test_shutdown_while_a_command_runs_leaves_no_process(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    pids = tmp_path / "pids.txt"
    async with tool_server(folders=[workspace], sessions_dir=sessions) as editor:
        await _start_long_command(editor, pids)
    await wait_until(lambda: not _command_running(), timeout=5, what="the command's processes to end")


async def test_an_editor_that_goes_away_leaves_no_process(tmp_path: Path):
    # the client's end of stdin closes without shutdown/exit (the editor crashed)
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    pids = tmp_path / "pids.txt"
    async with tool_server(folders=[workspace], sessions_dir=sessions, graceful=False) as editor:
        await _start_long_command(editor, pids)
        server = psutil.Process(editor.server_pid)
        editor.client._server.stdin.close()
        await asyncio.to_thread(server.wait, 10)
    await wait_until(lambda: not _command_running(), timeout=5, what="the command's processes to end")
