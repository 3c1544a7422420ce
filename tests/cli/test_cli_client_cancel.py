"""The headless client gives up on a request (Ctrl-C during start-up or a
history load) and the server's late answer arrives: nothing is logged as an
error, and the client still shuts down."""

from __future__ import annotations

import asyncio
import logging
import sys
import textwrap
from pathlib import Path

import pytest

from agent_lsp.cli.client import HeadlessClient
from agent_lsp.cli.run import cancel_running_turn
from agent_lsp.cli.transcript import Transcript
from cli_helpers import clean_env

# A stand-in server that answers `initialize` late, then everything at once.
SLOW_SERVER = textwrap.dedent('''
    import json, sys, time
    def read():
        length = 0
        while (line := sys.stdin.buffer.readline().strip()):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(sys.stdin.buffer.read(length)) if length else None
    def send(message):
        body = json.dumps(message).encode()
        sys.stdout.buffer.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        sys.stdout.buffer.flush()
    while (message := read()) is not None:
        if message.get("method") == "initialize":
            time.sleep(1.0)
        if "id" in message and "method" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {}}})
        if message.get("method") == "exit":
            break
''')


async def test_a_late_answer_to_a_cancelled_start_is_dropped_quietly(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    script = tmp_path / "slow_server.py"
    script.write_text(SLOW_SERVER)
    client = HeadlessClient(tmp_path, server_command=[sys.executable, str(script)])
    caplog.set_level(logging.DEBUG)
    start = asyncio.ensure_future(client.start())
    await asyncio.sleep(0.3)
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
    await asyncio.sleep(1.5)  # the server answers `initialize` now
    await client.close()
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert not problems, [r.getMessage() for r in problems]


async def test_a_prompt_cancelled_before_its_answer_still_names_and_stops_its_session(tmp_path: Path):
    """Ctrl-C right after `run` sent the prompt: the session the server made is
    named (so it can be continued) and its turn is cancelled, not left running."""
    settings = {"model": {"provider": "scripted", "script": [{"hang": "thinking it over"}]}}
    async with HeadlessClient(tmp_path, settings=settings, transcript=Transcript(),
                              env=clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))) as client:
        prompt = asyncio.ensure_future(client.followup("go"))
        await asyncio.sleep(0)  # the request is written; its answer needs a round trip
        prompt.cancel()
        with pytest.raises(asyncio.CancelledError):
            await prompt
        assert client.last_session_id is None
        await client.settle_followup(30)
        await cancel_running_turn(client, client.transcript)
        (stored,) = (tmp_path / "sessions").rglob("*.jsonl")
        assert client.last_session_id == stored.stem
        assert client.session(stored.stem).status == "idle"
