"""Sandboxed commands through the real server: fewer questions where it is safe, plain
words where it is not, and results that say where a command ran.

The same five-command task asks nothing when its commands run sandboxed and asks five
times when bubblewrap is missing (each question saying "not sandboxed" and why); a
command with network is asked about; what the sandbox blocked is named; a sandboxed
write is undone by turn revert; a cancelled sandboxed command leaves no process."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest
from sandbox_places import Places, make_places, needs_bwrap
from sandbox_turns import server, turn
from tools_harness import call, error_code, is_error, text_of

FIVE = ["echo one", "ls", "pwd", "true", "cat notes.md"]
TINY_TEST = "def test_adds():\n    assert 1 + 1 == 2\n"


@pytest.fixture
def places(tmp_path: Path) -> Places:
    places = make_places(tmp_path)
    (places.workspace / "notes.md").write_text("notes\n")
    (places.workspace / "test_tiny.py").write_text(TINY_TEST)
    return places


def running(*argv: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline", "status"])
            if p.info["cmdline"] == list(argv) and p.info["status"] != psutil.STATUS_ZOMBIE]


@needs_bwrap()
async def test_sandboxed_commands_ask_nothing_report_where_they_ran_revert_and_cancel(places: Places):
    async with server(places) as editor:
        _, results = await turn(editor, [call("run_command", command=c) for c in FIVE])
        assert editor.permission_requests == []
        assert [r["meta"]["sandbox"] for r in results] == [{"sandboxed": True, "network": False, "kind": "bubblewrap"}] * 5
        assert all("[sandboxed, no network]\n[exit code 0]" in text_of(r) for r in results), results
        assert (places.workspace / "hook-ran").exists() and not (places.outside / "hook-escaped").exists()

        # a test run and a write in the workspace work; what the sandbox refuses is named
        steps = [f"{sys.executable} -m pytest -q test_tiny.py", "echo made > made.txt",
                 "cat ~/.ssh/id_rsa", f"echo more >> {places.outside}/file.txt"]
        sid, (tests, made, secret, outside) = await turn(editor, [call("run_command", command=c) for c in steps])
        assert "1 passed" in text_of(tests) and tests["meta"]["exitCode"] == 0
        assert (places.workspace / "made.txt").read_text() == "made\n"
        assert f"[blocked by the sandbox: {places.canary} is hidden" in text_of(secret)
        assert f"[blocked by the sandbox: write to {places.outside}/file.txt" in text_of(outside)
        assert "outsideSandbox: true" in text_of(outside)
        assert outside["meta"]["sandbox"]["blocked"].startswith("write to")
        assert (places.outside / "file.txt").read_text() == "outside\n"
        assert editor.permission_requests == []

        report = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
        assert str((places.workspace / "made.txt").resolve()) in report["reverted"]
        assert not (places.workspace / "made.txt").exists()

        # with network it is asked about, and the question says so
        editor.permission_answer = "once"
        _, (ran,) = await turn(editor, [call("run_command", command="true")], shell={"network": "on"})
        (question,) = editor.permission_requests
        assert question["title"] == 'Run `true` (sandboxed, with network (the setting shell.network is "on"))'
        assert ran["meta"]["sandbox"]["network"] is True

        # outside the sandbox on the model's request: asked every time
        editor.permission_requests.clear()
        _, (ran,) = await turn(editor, [call("run_command", command="true", outsideSandbox=True)])
        (question,) = editor.permission_requests
        assert "not sandboxed: the agent asked to run it outside the sandbox" in question["title"]
        assert question["choices"] == ["once", "deny"] and "outside the sandbox" in question["asksEveryTime"]

        # a cancelled sandboxed command leaves no process
        editor.configure({"model": {"provider": "scripted", "script": [
            call("run_command", command="sleep 47.25 & sleep 48.25"), {"text": "unreached"}]}})
        before = len(editor.statuses)
        sid = (await editor.request("agent/followup", {"content": "go"}))["sessionId"]
        await editor.wait_for(lambda: running("sleep", "47.25") and running("sleep", "48.25"), what="the command to start")
        await editor.request("agent/cancel", {"sessionId": sid})
        await editor.wait_idle(sid, before)
        (result,) = [e["data"] for e in editor.events[sid] if e["type"] == "tool/result"]
        assert error_code(result) == "ABORTED" and result["meta"]["sandbox"]["sandboxed"] is True
        assert not running("sleep", "47.25") and not running("sleep", "48.25")


async def test_without_bubblewrap_every_command_is_asked_and_require_refuses(places: Places):
    async with server(places, PATH=places.path_without_bwrap()) as editor:
        editor.permission_answer = "once"
        _, results = await turn(editor, [call("run_command", command=c) for c in FIVE], shell={"landlock": False})
        assert [q["title"] for q in editor.permission_requests] == [
            f"Run `{c}` (not sandboxed: bubblewrap is not installed: apt install bubblewrap "
            "(Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap))" for c in FIVE]
        assert not any(is_error(r) for r in results)
        assert all(r["meta"]["sandbox"]["sandboxed"] is False for r in results)

        editor.permission_requests.clear()
        sid, (refused,) = await turn(editor, [call("run_command", command="echo x > refused.txt")],
                                   shell={"sandbox": "require", "landlock": False})
        assert error_code(refused) == "SANDBOX_REQUIRED" and editor.permission_requests == []
        hook = [e["data"] for e in editor.events[sid] if e["type"] == "hook/run"][-1]
        assert hook["outcome"] == "failed" and 'shell.sandbox is "require"' in hook["message"]
        assert 'shell.sandbox is "require"' in text_of(refused) and "apt install bubblewrap" in text_of(refused)
        assert not (places.workspace / "refused.txt").exists()
