"""Drive the real `agent-lsp acp` subprocess with the ACP Python SDK's client side.

`AcpTestClient` is the editor: it records every session/update, answers
permission questions from a list of option ids, and (when it advertises fs)
serves files from its own buffers, so a test sees what went through the
client rather than the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

AGENT = [sys.executable, "-m", "agent_lsp", "acp"]


def updates_json(updates: list[Any]) -> list[dict[str, Any]]:
    return [u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in updates]


class AcpTestClient:
    def __init__(self, *, buffers: dict[str, str] | None = None, answers: list[str] | None = None,
                 terminals: bool = False):
        self.terminals = terminals  # run commands in "terminals" of ours (real processes)
        self.terminal_runs: dict[str, dict[str, Any]] = {}
        self.updates: dict[str, list[Any]] = {}
        self.buffers = buffers  # path -> text; None: no fs capability
        self.writes: list[tuple[str, str]] = []
        self.reads: list[str] = []
        self.answers = list(answers or [])  # option ids to pick, in order; none left: cancelled
        self.permission_requests: list[Any] = []
        self.on_read: Any = None  # fn(path) called before a read is answered (to change a buffer)
        self.notifications: list[tuple[str, dict[str, Any]]] = []  # extension notifications (no leading "_"), in order

    def capabilities(self) -> ClientCapabilities:
        fs = self.buffers is not None
        return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=self.terminals)

    def of(self, session_id: str) -> list[Any]:
        return self.updates.get(session_id, [])

    def kinds(self, session_id: str) -> list[str]:
        return [u.session_update for u in self.of(session_id)]

    def text(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of(session_id) if u.session_update == "agent_message_chunk")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any):
        self.permission_requests.append((tool_call, options))
        if not self.answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0)))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any):
        self.reads.append(path)
        if self.on_read is not None:
            self.on_read(path)
        if self.buffers is None or path not in self.buffers:
            raise acp.RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        assert self.buffers is not None, "fs/write_text_file without the capability"
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None, env: Any = None,
                              cwd: str | None = None, output_byte_limit: int | None = None, **kwargs: Any):
        assert self.terminals, "terminal/create without the capability"
        process = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        terminal_id = f"term_{len(self.terminal_runs) + 1}"
        run = {"command": [command, *(args or [])], "cwd": cwd, "process": process, "output": b"", "released": False}

        async def read() -> None:
            while chunk := await process.stdout.read(4096):
                run["output"] += chunk

        run["reader"] = asyncio.ensure_future(read())
        self.terminal_runs[terminal_id] = run
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any):
        run = self.terminal_runs[terminal_id]
        code = await run["process"].wait()
        await run["reader"]
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None, signal=None if code >= 0 else "SIGKILL")

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any):
        run = self.terminal_runs[terminal_id]
        code = run["process"].returncode
        status = None if code is None else TerminalExitStatus(exit_code=code if code >= 0 else None)
        return TerminalOutputResponse(output=run["output"].decode(), truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        process = self.terminal_runs[terminal_id]["process"]
        if process.returncode is None:
            os.killpg(process.pid, 9)
            await process.wait()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        self.terminal_runs[terminal_id]["released"] = True
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notifications.append((method, params))

    def on_connect(self, conn: Any) -> None:
        pass


def agent_env(sessions_dir: Path) -> dict[str, str]:
    """The environment without the user's settings and keys (the model comes from --settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LSP_", "OPENAI_", "ANTHROPIC_"))}
    for switch in ("AGENT_LSP_LANGUAGE_SERVERS", "AGENT_LSP_SANDBOXED_COMMANDS"):  # the suite's switches (tests/conftest.py)
        if switch in os.environ:
            env[switch] = os.environ[switch]
    env["AGENT_LSP_CONFIG"] = str(sessions_dir.parent / "no-user-config.toml")
    env["XDG_DATA_HOME"] = str(sessions_dir.parent / "data")
    return env


def settings_arg(sessions_dir: Path, script: list[Any], model_extra: dict[str, Any] | None = None, **extra: Any) -> list[str]:
    model = {"provider": "scripted", "script": script, **(model_extra or {})}
    settings = {"model": model, "sessionsDir": str(sessions_dir), **extra}
    return ["--settings", json.dumps(settings)]


@contextlib.asynccontextmanager
async def acp_agent(client: AcpTestClient, sessions_dir: Path, script: list[Any] | None = None,
                    **settings: Any) -> AsyncIterator[Any]:
    """An initialized connection to a fresh `agent-lsp acp` process."""
    async with acp.spawn_agent_process(client, *AGENT, *settings_arg(sessions_dir, script or [], **settings),
                                       env=agent_env(sessions_dir)) as (conn, process):
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                               client_capabilities=client.capabilities()), 30)
        conn.process = process
        yield conn
