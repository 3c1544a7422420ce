"""`agent-lsp` serves LSP: on stdio with no arguments (what editors launch),
and on TCP with `serve --tcp`."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from agent_lsp.cli.client import HeadlessClient
from agent_lsp.cli.transcript import Transcript

from cli_helpers import clean_env


@pytest.mark.parametrize("args", [[], ["--stdio"]], ids=["no-arguments", "--stdio"])
async def test_stdio_serving_answers_initialize(tmp_path: Path, workspace: Path, args: list[str]):
    log_file = tmp_path / "server.log"
    command = [sys.executable, "-m", "agent_lsp", *args, "--log-level", "debug", "--log-file", str(log_file)]
    client = HeadlessClient(workspace, transcript=Transcript(), server_command=command, env=clean_env(tmp_path))
    async with client:
        assert client.server_info.get("name") == "agent-lsp"
        commands = client.server_capabilities.get("executeCommandProvider", {}).get("commands", [])
        assert "agentLsp.followup" in commands
    # The server logged to its --log-file, not into the JSON-RPC stream.
    assert log_file.read_text().strip()


async def test_log_level_filters_what_the_log_file_gets(tmp_path: Path, workspace: Path):
    logs = {}
    for level in ("debug", "error"):
        log_file = tmp_path / f"{level}.log"
        command = [sys.executable, "-m", "agent_lsp", "--log-level", level, "--log-file", str(log_file)]
        async with HeadlessClient(workspace, transcript=Transcript(), server_command=command, env=clean_env(tmp_path)):
            pass
        logs[level] = log_file.read_text() if log_file.exists() else ""
    assert " DEBUG " in logs["debug"]
    assert " DEBUG " not in logs["error"] and " INFO " not in logs["error"] and " WARNING " not in logs["error"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _connect(client: LanguageClient, port: int, process: subprocess.Popen, deadline: float) -> None:
    while True:
        try:
            await client.start_tcp("127.0.0.1", port)
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_serve_tcp_answers_initialize(tmp_path: Path, workspace: Path):
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_lsp", "serve", "--tcp", f"127.0.0.1:{port}"],
        env=clean_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        client = LanguageClient("test", "1")
        await _connect(client, port, process, time.monotonic() + 20)
        result = await asyncio.wait_for(client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="project")],
        )), 20)
        assert result.server_info is not None and result.server_info.name == "agent-lsp"
        assert "agentLsp.followup" in result.capabilities.execute_command_provider.commands
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
        await asyncio.to_thread(process.wait, 10)
        assert process.returncode == 0
        await client.stop()
        stderr = process.stderr.read().decode()
        assert "Traceback" not in stderr and "SystemExit" not in stderr, stderr  # a normal shutdown is quiet
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()


async def test_serve_ws_answers_initialize_or_says_what_is_missing(tmp_path: Path, workspace: Path):
    import importlib.util

    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_lsp", "serve", "--ws", f"127.0.0.1:{port}"],
        env=clean_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        if importlib.util.find_spec("websockets") is None:
            assert await asyncio.to_thread(process.wait, 30) == 1
            assert "agent-lsp[ws]" in process.stderr.read()
            return
        client = LanguageClient("test", "1")
        deadline = time.monotonic() + 20
        while True:
            try:
                await client.start_ws("127.0.0.1", port)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)
        result = await asyncio.wait_for(client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="project")],
        )), 20)
        assert result.server_info is not None and result.server_info.name == "agent-lsp"
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
        assert await asyncio.to_thread(process.wait, 10) == 0  # `exit` ends the process
        await client.stop()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
