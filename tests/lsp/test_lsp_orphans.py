"""A kill -9 of the server leaves no command running: not the shell, not what it started."""

from __future__ import annotations

import sys

import psutil
import pytest

from lsp_harness import running_server


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a parent-death signal and /proc")
async def test_kill_9_of_the_server_kills_the_running_command_and_its_children(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # bash stays the parent of two sleeps: one in the background, one in the foreground
    command = "sleep 300 & sleep 301; echo never"
    script = [{"tools": [{"name": "run_command", "arguments": {"command": command}}]}]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script) as editor:
        server = psutil.Process(editor.server_pid)
        await editor.request("agent/followup", {"content": "sleep"})

        def sleeps() -> list[psutil.Process]:
            return [p for p in server.children(recursive=True) if p.name() == "sleep"]

        await editor.wait_for(lambda: len(sleeps()) == 2, what="both sleeps running")
        command_processes = server.children(recursive=True)  # bash, the sleeps, and the watchdog
        await editor.kill()
    gone, alive = psutil.wait_procs(command_processes, timeout=5)
    assert [(p.pid, p.name()) for p in alive] == []
