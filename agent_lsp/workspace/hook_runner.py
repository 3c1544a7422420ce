"""Runs one hook command: JSON on stdin, an answer from its exit code and stdout.

The command runs with `sh -c` in the workspace root, in a process group of its
own that dies with the server (`agent_lsp.process`), with the environment the
shell tool gives commands (no secrets; `agent_lsp.tools.command_env`) plus
`CLAUDE_PROJECT_DIR` (the workspace root, as Claude Code's hooks expect), in
the sandbox the agent's commands run in (`agent_lsp.sandbox`): a hook is not
asked about, so where `shell.sandbox` is "require" and no sandbox works, it
fails instead of running unsandboxed.
At its timeout the whole group is killed.

What the answer means (Claude Code's rules):

- exit 0: success; stdout may be a JSON object (`decision`, `reason`,
  `continue`, `stopReason`, `additionalContext`, `hookSpecificOutput`),
  otherwise it is plain text;
- exit 2: block; stderr is the reason;
- any other exit, a start failure, a timeout: the hook failed. The caller
  reports it and goes on as if the hook had not been configured.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_lsp.process import GroupGuard, die_with_parent
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.tools.command_env import CommandEnvPolicy, command_env

MAX_OUTPUT_BYTES = 64_000  # each of stdout and stderr; more is cut
BLOCK_EXIT_CODE = 2


@dataclass
class HookAnswer:
    outcome: Literal["ok", "block", "failed", "timeout"]
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    output: dict[str, Any] = field(default_factory=dict)  # stdout as JSON, when it is an object
    message: str = ""  # what went wrong, for a failed or timed-out hook

    @property
    def reason(self) -> str:
        """Why the hook blocks (or asks the turn to continue)."""
        specific = self.output.get("hookSpecificOutput") if isinstance(self.output.get("hookSpecificOutput"), dict) else {}
        for value in (self.output.get("reason"), specific.get("permissionDecisionReason"), self.output.get("stopReason"),
                      self.stderr.strip(), self.stdout.strip() if not self.output else ""):
            if isinstance(value, str) and value.strip():
                return value.strip()
        return "no reason given"

    @property
    def blocks(self) -> bool:
        """Exit 2, `decision: "block"`, `continue: false` or a PreToolUse `permissionDecision: "deny"`."""
        if self.outcome == "block":
            return True
        if self.outcome != "ok":
            return False
        specific = self.output.get("hookSpecificOutput")
        denied = isinstance(specific, dict) and specific.get("permissionDecision") == "deny"
        return self.output.get("decision") == "block" or self.output.get("continue") is False or denied

    @property
    def additional_context(self) -> str:
        """Context the hook adds for the model (JSON `additionalContext`, also under `hookSpecificOutput`)."""
        if self.outcome != "ok":
            return ""
        specific = self.output.get("hookSpecificOutput")
        for value in (self.output.get("additionalContext"), specific.get("additionalContext") if isinstance(specific, dict) else None):
            if isinstance(value, str) and value.strip():
                return value.strip()
        return ""


async def run_hook_command(command: str, payload: dict[str, Any], *, cwd: Path, timeout_s: float,
                           env_policy: CommandEnvPolicy = CommandEnvPolicy(),
                           sandbox: SandboxPolicy | None = None) -> HookAnswer:
    env = command_env(env_policy)
    env["CLAUDE_PROJECT_DIR"] = str(cwd)
    argv = [shutil.which("sh") or "/bin/sh", "-c", command]
    if sandbox is not None:
        placement = await asyncio.to_thread(sandbox.place, command)  # the first asks whether bubblewrap works
        if placement.refused:
            return HookAnswer("failed", message=placement.refused)
        argv = placement.wrap(argv, cwd)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd), env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, preexec_fn=die_with_parent(),
        )
    except OSError as error:
        return HookAnswer("failed", message=f"could not start: {error.strerror or error}")
    guard = GroupGuard.start(proc.pid)  # the hook's group dies with the server, even on kill -9
    try:
        return await _answer(proc, json.dumps(payload).encode("utf-8"), timeout_s)
    finally:
        _kill_group(proc.pid)  # whatever it left running
        if guard is not None:
            guard.release()


async def _answer(proc: asyncio.subprocess.Process, stdin: bytes, timeout_s: float) -> HookAnswer:
    try:
        out, err = await asyncio.wait_for(_communicate(proc, stdin), timeout_s)
    except asyncio.TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        return HookAnswer("timeout", message=f"did not answer within {timeout_s:g} s; it was killed")
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        raise
    stdout, stderr = _text(out), _text(err)
    code = proc.returncode
    if code == BLOCK_EXIT_CODE:
        return HookAnswer("block", code, stdout, stderr)
    if code != 0:
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
        return HookAnswer("failed", code, stdout, stderr, message=f"exited with code {code}: {detail}")
    output: dict[str, Any] = {}
    if stdout.lstrip().startswith("{"):
        try:
            parsed = json.loads(stdout)
        except ValueError as error:
            return HookAnswer("failed", code, stdout, stderr, message=f"printed JSON that does not parse: {error}")
        output = parsed if isinstance(parsed, dict) else {}
    return HookAnswer("ok", code, stdout, stderr, output)


async def _communicate(proc: asyncio.subprocess.Process, stdin: bytes) -> tuple[bytes, bytes]:
    async def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # a hook that does not read its input is fine
        finally:
            proc.stdin.close()

    async def read(stream: asyncio.StreamReader | None) -> bytes:
        data = b""
        while stream is not None:
            chunk = await stream.read(65536)
            if not chunk:
                break
            if len(data) < MAX_OUTPUT_BYTES:
                data += chunk[: MAX_OUTPUT_BYTES - len(data)]
        return data

    _, out, err = await asyncio.gather(feed(), read(proc.stdout), read(proc.stderr))
    await proc.wait()
    return out, err


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
