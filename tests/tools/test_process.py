"""agent_lsp.process: a guarded process group dies with its parent, and only then."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from agent_lsp.process import GroupGuard

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a parent-death signal and /proc")


def test_a_released_guard_kills_nothing():
    group = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        guard = GroupGuard.start(group.pid)
        assert guard is not None
        guard.release()
        assert not psutil.pid_exists(guard.pid) or psutil.Process(guard.pid).status() == psutil.STATUS_ZOMBIE
        assert group.poll() is None  # still running
    finally:
        group.kill()
        group.wait()


def test_a_group_dies_with_its_parent_killed_with_9():
    parent_code = textwrap.dedent("""
        import subprocess, sys, time
        from agent_lsp.process import GroupGuard, die_with_parent
        group = subprocess.Popen(["bash", "-c", "sleep 300 & sleep 301"], start_new_session=True, preexec_fn=die_with_parent())
        GroupGuard.start(group.pid)
        print(group.pid, flush=True)
        time.sleep(300)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    leader = psutil.Process(int(parent.stdout.readline()))
    deadline = time.monotonic() + 10
    while len(leader.children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    members = [leader, *leader.children(recursive=True)]
    assert len(members) == 3
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    gone, alive = psutil.wait_procs(members, timeout=5)
    assert alive == []
