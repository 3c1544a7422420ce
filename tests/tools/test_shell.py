import asyncio
import time

import psutil
import pytest
from tool_fakes import Ctx

from agent_lsp.tools import shell
from agent_lsp.tools.shell import CappedOutput


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_for_pids(ctx: Ctx, count: int) -> list[int]:
    """The PIDs the command printed (one per line) once it printed `count` of them."""
    for _ in range(500):
        text = "".join(e["text"] for e in ctx.progress_events if e["stream"] == "stdout")
        pids = [int(x) for x in text.split()]
        if len(pids) >= count:
            return pids
        await asyncio.sleep(0.01)
    raise AssertionError("the command did not start")


async def test_output_and_exit_code(disk_tools):
    out = await disk_tools("run_command", command="echo hello; echo oops >&2; exit 3")
    assert not out.is_error
    assert "hello\n" in out.content and "oops\n" in out.content
    assert out.content.endswith("[exit code 3]") and out.meta["exitCode"] == 3


async def test_runs_in_the_workspace_or_cwd(ws, disk_tools):
    root = await disk_tools("run_command", command="pwd")
    assert root.content.startswith(str(ws.resolve()))
    sub = await disk_tools("run_command", command="ls", cwd="src")
    assert sub.content.startswith("util.py")
    missing = await disk_tools("run_command", command="ls", cwd="nope")
    assert missing.error["code"] == "NOT_A_DIRECTORY"


async def test_output_streams_while_it_runs(disk_tools):
    ctx = Ctx()
    task = asyncio.ensure_future(disk_tools("run_command", ctx, command="echo first; sleep 5; echo second"))
    for _ in range(300):
        if ctx.progress_events:
            break
        await asyncio.sleep(0.01)
    assert ctx.progress_events[0] == {"stream": "stdout", "text": "first\n"}
    assert not task.done()
    ctx.signal.aborted = True
    await task


async def test_long_output_keeps_head_and_tail(disk_tools, monkeypatch):
    monkeypatch.setattr(shell, "HEAD_CHARS", 100)
    monkeypatch.setattr(shell, "TAIL_CHARS", 100)
    monkeypatch.setattr(shell.CappedOutput.__init__, "__defaults__", (100, 100))
    out = await disk_tools("run_command", command="seq 1 5000")
    assert out.content.startswith("1\n2\n3\n")
    assert "characters of output not shown" in out.content
    assert out.content.endswith("4999\n5000\n[exit code 0]")


def test_capped_output_keeps_everything_when_short():
    capped = CappedOutput(head=5, tail=5)
    capped.add("abc")
    capped.add("def")
    assert capped.text() == "abcdef"
    capped.add("x" * 100 + "TAIL!")
    assert capped.text().startswith("abcde\n[… ") and capped.text().endswith("TAIL!")


async def test_cancel_kills_the_whole_group_fast(disk_tools):
    ctx = Ctx()
    command = "sleep 30 & echo $!; (sleep 30; echo never) & echo $!; echo $$; wait"
    task = asyncio.ensure_future(disk_tools("run_command", ctx, command=command))
    pids = await wait_for_pids(ctx, 3)
    assert not any(gone(p) for p in pids)
    ctx.signal.aborted = True
    started = time.monotonic()
    out = await task
    elapsed = time.monotonic() - started
    assert out.is_error and out.error["code"] == "ABORTED"
    assert all(gone(p) for p in pids), [p for p in pids if not gone(p)]
    assert elapsed < 0.1, elapsed


async def test_cancelling_the_task_kills_the_group(disk_tools):
    ctx = Ctx()
    task = asyncio.ensure_future(disk_tools("run_command", ctx, command="sleep 30 & echo $!; echo $$; wait"))
    pids = await wait_for_pids(ctx, 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all(gone(p) for p in pids)


async def test_timeout_kills_the_group(disk_tools):
    ctx = Ctx()
    out = await disk_tools("run_command", ctx, command="sleep 30 & echo $!; echo $$; wait", timeoutSeconds=0.3)
    assert out.is_error and out.error["code"] == "TIMEOUT" and "timed out after 0.3 s" in out.content
    pids = [int(x) for x in "".join(e["text"] for e in ctx.progress_events).split()]
    assert len(pids) == 2 and all(gone(p) for p in pids)


async def test_background_leftovers_do_not_outlive_the_command(disk_tools):
    ctx = Ctx()
    out = await disk_tools("run_command", ctx, command="sleep 30 > /dev/null 2>&1 & echo $!")
    assert out.content.endswith("[exit code 0]")
    (pid,) = [int(x) for x in out.content.split("\n")[:1]]
    assert gone(pid)


async def test_kill_running_commands_at_exit(disk_tools):
    ctx = Ctx()
    task = asyncio.ensure_future(disk_tools("run_command", ctx, command="sleep 30 & echo $!; echo $$; wait"))
    pids = await wait_for_pids(ctx, 2)
    shell.kill_running_commands()
    out = await task
    assert all(gone(p) for p in pids)
    assert out.meta["exitCode"] != 0


def test_the_server_sweep_kills_a_command_not_registered_yet(tmp_path):
    # In a separate process (the sweep kills the caller's children that lead their
    # own group): a command spawned but not yet registered as running dies too.
    import subprocess
    import sys

    script = (
        "import subprocess, sys\n"
        "from agent_lsp.tools.shell import kill_running_commands\n"
        "child = subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
        "plain = subprocess.Popen(['sleep', '30'])  # not a group leader: not ours to kill\n"
        "kill_running_commands(sweep_children=True)\n"
        "print(child.wait(5), plain.poll())\n"
        "plain.kill()\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["-9", "None"]
