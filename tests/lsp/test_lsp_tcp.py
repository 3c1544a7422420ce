"""The same session over TCP (`serve_tcp`)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from agent_lsp.lsp.language_server import raw_params_converter


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def connect(client: LanguageClient, port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            await client.start_tcp("127.0.0.1", port)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_a_session_over_tcp(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    port = free_port()
    env = dict(os.environ, AGENT_LSP_CONFIG=str(tmp_path / "none.toml"))
    process = subprocess.Popen(
        [sys.executable, "-c", f"from agent_lsp.lsp.server import serve_tcp; serve_tcp('127.0.0.1', {port})"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = LanguageClient("tcp-test", "0", converter_factory=raw_params_converter)
        statuses: list[tuple[str, str]] = []
        text: list[str] = []
        client.feature("agent/status")(lambda p: statuses.append((p["sessionId"], p["status"])))

        @client.feature("session/event")
        def on_event(params):
            for e in params["events"]:
                if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "text-delta":
                    text.append(e["data"]["chunk"]["text"])

        await connect(client, port)
        await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(experimental={"agentLsp": {"events": True}}),  # it reads the events
                    workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
                    initialization_options={
                        "model": {"provider": "scripted", "script": [{"text": "over tcp"}]},
                        "sessionsDir": str(tmp_path / "sessions"),
                    },
                )
            ),
            10,
        )
        client.initialized(types.InitializedParams())
        ref = await asyncio.wait_for(client.protocol.send_request_async("agent/followup", {"content": "hi"}), 10)
        deadline = time.monotonic() + 10
        while (ref["sessionId"], "idle") not in statuses:
            assert time.monotonic() < deadline, "no idle status"
            await asyncio.sleep(0.01)
        assert "".join(text) == "over tcp"
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
        await client.stop()
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
