"""run_command: a shell command in the workspace, streamed, capped, killable.

The command runs in its own session and process group (start_new_session),
so cancel, timeout and server exit kill the whole group: nothing it started
is left behind, also when the server is killed with -9 (`agent_lsp.process`).
The group does not outlive the command either: when the shell exits,
whatever it left running in the background is killed too.

Output streams to the client as it arrives (`ctx.progress({"stream":
"stdout" | "stderr", "text"})`); what goes back to the model keeps the head
and the tail of a long output. A non-zero exit code is a normal result (the
model reads it); a timeout or a cancel is an error result. The command's
environment is the server's without its secrets (`agent_lsp.tools.command_env`).
The files the command created, changed or deleted are journaled for turn
revert when the environment has a `CommandWatcher` (`meta["journal"]`,
`meta["changedFiles"]`).

With a sandbox policy (`agent_lsp.sandbox`, the `shell` settings) the command
runs in the sandbox where one works: the permission question (when one is
asked) says "not sandboxed" or "with network" and why, the result says where
it ran (a line of its text and `meta["sandbox"]`), and a failure the sandbox
caused says "blocked by the sandbox: …". The model may ask to run a command
outside the sandbox (`outsideSandbox`); the user is asked every time.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import os
import shutil
import signal
import time
from dataclasses import replace
from pathlib import Path

from pydantic import Field

from agent_lsp.agent.ports import PermissionRequest, ToolContext, ToolOutput
from agent_lsp.process import GroupGuard, die_with_parent
from agent_lsp.sandbox import Placement, blocked_by_sandbox
from agent_lsp.tools.base import BuiltinTool, ToolError, ToolInput, error_output
from agent_lsp.tools.command_env import CommandEnvPolicy, command_env

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 1800.0
HEAD_CHARS = 10_000
TAIL_CHARS = 20_000
POLL_S = 0.01  # how often a running command checks the turn's abort signal
DRAIN_S = 0.2  # after the shell exits, how long its pipes may stay open

_running_groups: set[int] = set()


def kill_running_commands(*, sweep_children: bool = False) -> None:
    """Kill every command group still running (called at server exit, SIGTERM).

    `sweep_children`: also the groups led by this process's own children (for
    a process whose only such children are commands, i.e. the server): a
    command spawned an instant ago may not be registered yet (the spawn is
    awaited), but it is already our child and the leader of its own group."""
    groups = set(_running_groups)
    if sweep_children:
        groups |= _child_group_leaders()
    for pgid in groups:
        _kill_group(pgid)
    _running_groups.clear()


def _child_group_leaders() -> set[int]:
    """Pids of our children that lead their own process group (Linux /proc; else none)."""
    me = os.getpid()
    leaders: set[int] = set()
    try:
        entries = os.scandir("/proc")
    except OSError:
        return leaders
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            pid, ppid, pgid = int(entry.name), int(fields[1]), int(fields[2])
            if ppid == me and pgid == pid:
                leaders.add(pid)
    return leaders


atexit.register(kill_running_commands)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _kill_group_and_wait(pgid: int, limit_s: float = 0.05) -> None:
    """SIGKILL the group, then give the kernel a moment to finish the processes
    (a killed process is not gone the instant kill() returns)."""
    _kill_group(pgid)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while loop.time() < deadline and _group_has_live_members(pgid):
        await asyncio.sleep(0.002)


def _group_has_live_members(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # members may be zombies waiting for their parent to reap them: those are finished
    try:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[2]) == pgid and fields[0] != b"Z":
                    return True
        return False
    except FileNotFoundError:  # no /proc (macOS): trust kill(0)
        return True


class CappedOutput:
    """Keeps the first HEAD_CHARS and the last TAIL_CHARS of a stream of text."""

    def __init__(self, head: int = HEAD_CHARS, tail: int = TAIL_CHARS):
        self.head_limit, self.tail_limit = head, tail
        self.head = ""
        self.tail = ""
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.head) < self.head_limit:
            room = self.head_limit - len(self.head)
            self.head += text[:room]
            text = text[room:]
        if not text:
            return
        self.tail += text
        if len(self.tail) > self.tail_limit * 2:
            self._trim()

    def _trim(self) -> None:
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            self.dropped += excess
            self.tail = self.tail[excess:]

    def text(self) -> str:
        self._trim()
        if self.dropped:
            return f"{self.head}\n[… {self.dropped} characters of output not shown …]\n{self.tail}"
        return self.head + self.tail


class RunCommandInput(ToolInput):
    command: str = Field(description="Shell command line (bash), run in the workspace.")
    timeout_seconds: float = Field(
        default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, description="Kill the command after this long."
    )
    cwd: str | None = Field(default=None, description="Working folder, relative to the workspace root.")
    outside_sandbox: bool = Field(
        default=False, description="Run it outside the sandbox (the user is asked every time); only after the sandbox "
        "blocked what the command must do.")


class RunCommand(BuiltinTool):
    name = "run_command"
    description = (
        "Run a shell command in the workspace (bash; stdin is empty) and return its output and exit "
        "code. Long outputs keep their beginning and end. Background processes are killed when the "
        "command ends. Use it for tests, builds, git; use the file tools to read and edit files."
    )
    input_model = RunCommandInput

    async def execute(self, args: RunCommandInput, ctx: ToolContext) -> ToolOutput:
        cwd = self.env.resolve(args.cwd, default_root=True)
        if not cwd.is_dir():
            raise ToolError(f"cwd '{self.env.show(cwd)}' is not a folder", "NOT_A_DIRECTORY")
        if not args.command.strip():
            raise ToolError("empty command", "BAD_COMMAND")
        shown_cwd = self.env.show(cwd)
        sandbox = self.env.sandbox
        placement = None if sandbox is None else await asyncio.to_thread(
            sandbox.place, args.command, outside=args.outside_sandbox)  # the first asks whether bubblewrap works
        if placement is not None and placement.refused:
            raise ToolError(placement.refused, "SANDBOX_REQUIRED", {"sandbox": placement.meta()})
        where = "" if placement is None else f" ({placement.label()})"
        await self.env.authorize(
            ctx,
            PermissionRequest(
                tool=self.name,
                title=f"Run `{args.command}`" + ("" if shown_cwd == "." else f" in {shown_cwd}") + where,
                kind="command",
                command=args.command,
                detail=args.command,
                sandboxed=placement is not None and placement.quiet,
                asks_every_time=(f"Always confirmed: it runs outside the sandbox ({placement.why})."
                                 if placement is not None and placement.exception else None),
            ),
        )
        watcher = self.env.commands
        before = None if watcher is None else await watcher.before_command()
        try:
            output = await run_shell(args.command, cwd, args.timeout_seconds, ctx, self.env.command_env, placement)
        except BaseException:
            if watcher is not None:
                watcher.forget(before)  # the task itself was cancelled: no result to journal in
            raise
        if watcher is not None:
            changes = await watcher.changes_since(before)
            if changes:
                # journaled like the file tools' edits: turn revert undoes them too
                meta = dict(output.meta or {})
                meta["journal"] = [self.env.record(ctx, change) for change in changes]
                meta["changedFiles"] = [self.env.show(change.path) for change in changes]
                output = replace(output, meta=meta)
        return output


async def run_shell(command: str, cwd: Path, timeout_s: float, ctx: ToolContext,
                    env_policy: CommandEnvPolicy = CommandEnvPolicy(), placement: Placement | None = None) -> ToolOutput:
    env = command_env(env_policy)
    argv = [shutil.which("bash") or "/bin/sh", "-c", command]
    if placement is not None:
        argv = await asyncio.to_thread(placement.wrap, argv, cwd)  # the first with an allow list starts its proxy
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        env=env,
        preexec_fn=die_with_parent(),
    )
    pgid = proc.pid  # leader of its own session and group (bubblewrap's, when sandboxed: killing it ends the sandbox)
    _running_groups.add(pgid)
    guard = GroupGuard.start(pgid)  # the group dies with the server, even on kill -9
    try:
        output = await _supervise(proc, pgid, timeout_s, ctx)
    finally:
        if guard is not None:
            guard.release()
    return output if placement is None else _report_sandbox(output, placement, started)


def _report_sandbox(output: ToolOutput, placement: Placement, started: float) -> ToolOutput:
    """Where the command ran, in its text and meta; what the sandbox blocked, when the output
    shows it or the proxy refused a host."""
    meta = {**(output.meta or {}), "sandbox": placement.meta()}
    lines = [f"[{placement.label()}]"]
    refused = placement.refused_hosts(started)
    if refused:
        meta["sandbox"]["refusedHosts"] = refused
        meta["sandbox"]["blocked"] = f"network access to {', '.join(refused)} (not in shell.allowedDomains)"
        lines.append(f"[blocked by the sandbox: network access to {', '.join(refused)}: not in shell.allowedDomains, "
                     "which only the user can change. If the task needs it, run the command again with "
                     "outsideSandbox: true; the user is asked first.]")
    elif placement.sandboxed and meta.get("exitCode") not in (0, None) and placement.policy is not None:
        blocked = blocked_by_sandbox(output.content, placement.policy, placement.network)
        if blocked is not None:
            meta["sandbox"]["blocked"] = blocked
            lines.append(f"[blocked by the sandbox: {blocked}. If the task needs it, run the command again with "
                         "outsideSandbox: true; the user is asked first.]")
    head, _, last = output.content.rpartition("\n")
    content = "\n".join([head, *lines, last]) if head else "\n".join([*lines, last])
    return replace(output, content=content, meta=meta)


async def _supervise(proc: asyncio.subprocess.Process, pgid: int, timeout_s: float, ctx: ToolContext) -> ToolOutput:
    output = CappedOutput()
    readers = [
        asyncio.ensure_future(_pump(proc.stdout, "stdout", output, ctx)),
        asyncio.ensure_future(_pump(proc.stderr, "stderr", output, ctx)),
    ]
    exited = asyncio.ensure_future(proc.wait())
    outcome = "exited"
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not exited.done():
            remaining = deadline - loop.time()
            if remaining <= 0:
                outcome = "timeout"
                break
            if ctx.signal.aborted:
                outcome = "cancelled"
                break
            await asyncio.wait({exited}, timeout=min(POLL_S, remaining))
    except asyncio.CancelledError:
        _kill_group(pgid)
        _running_groups.discard(pgid)
        for task in readers:
            task.cancel()
        await asyncio.shield(_reap(exited, pgid))
        raise
    if outcome != "exited":
        await _reap(exited, pgid)
    _, pending = await asyncio.wait(readers, timeout=DRAIN_S)
    await _kill_group_and_wait(pgid)  # background leftovers, and whoever still holds the pipes
    _running_groups.discard(pgid)
    if pending:
        await asyncio.wait(pending, timeout=DRAIN_S)
        for task in pending:
            task.cancel()

    text = output.text()
    text += "" if text.endswith("\n") or not text else "\n"
    code = proc.returncode
    meta = {"exitCode": code, "outcome": outcome}
    if outcome == "timeout":
        return error_output(
            f"{text}[timed out after {timeout_s:g} s; the command and its children were killed]", "TIMEOUT", meta
        )
    if outcome == "cancelled":
        return error_output(f"{text}[cancelled; the command and its children were killed]", "ABORTED", meta)
    return ToolOutput(content=(text or "(no output)\n") + f"[exit code {code}]", meta=meta)


async def _reap(exited: asyncio.Future, pgid: int) -> None:
    await _kill_group_and_wait(pgid)
    await exited


async def _pump(stream: asyncio.StreamReader | None, name: str, output: CappedOutput, ctx: ToolContext) -> None:
    if stream is None:
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        data = await stream.read(65536)
        text = decoder.decode(data, final=not data)
        if text:
            output.add(text)
            try:
                ctx.progress({"stream": name, "text": text})
            except Exception:  # a failing listener must not lose the command's output
                pass
        if not data:
            return
