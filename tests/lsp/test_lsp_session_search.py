"""agent/session/list with a query searches the text of the sessions' user and
assistant messages (not only titles), through the real server and from the
command line; the date filters still bound the result."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from lsp_harness import running_server

SUITE_SWITCHES = ("AGENT_LSP_LANGUAGE_SERVERS", "AGENT_LSP_SANDBOXED_COMMANDS")  # tests/conftest.py

SCRIPT = [
    {"when": "tokenizer", "text": "The lexer stops at U+FFFF, so astral emoji are dropped."},
    {"when": "loader", "text": "Renamed it to load_settings."},
]


async def followup(editor, content: str) -> str:
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": content}))["sessionId"]
    await editor.wait_idle(sid, before)
    return sid


async def test_a_query_finds_sessions_by_the_text_of_their_messages(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    async with running_server(folders=[workspace], sessions_dir=sessions, script=SCRIPT) as editor:
        emoji = await followup(editor, "Why does the tokenizer lose some characters?")
        loader = await followup(editor, "Rename the config loader")

        async def found(params: dict) -> list[dict]:
            return (await editor.request("agent/session/list", params))["sessions"]

        (hit,) = await found({"query": "ASTRAL emoji"})  # words of the model's answer, any case
        assert hit["sessionId"] == emoji and hit["title"] == "Why does the tokenizer lose some characters?"
        assert "astral emoji are dropped" in hit["excerpt"]
        assert [s["sessionId"] for s in await found({"query": "load_settings"})] == [loader]
        assert [s["sessionId"] for s in await found({"query": "config"})] == [loader]  # the user's words
        assert await found({"query": "config emoji"}) == []
        assert await found({"query": "astral", "updatedBefore": int(time.time() * 1000) - 3_600_000}) == []
        # a session that gains a message is found by it at once
        before = len(editor.statuses)
        await editor.request("agent/followup", {"sessionId": emoji, "content": "and what about the narwhal glyph"})
        await editor.wait_idle(emoji, before)
        assert [s["sessionId"] for s in await found({"query": "narwhal"})] == [emoji]

    env = {k: v for k, v in os.environ.items() if (not k.startswith("AGENT_LSP_") or k in SUITE_SWITCHES) and not k.endswith("_API_KEY")}
    env.update(AGENT_LSP_SESSIONS_DIR=str(sessions), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), AGENT_LSP_PROVIDER="scripted")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "agent_lsp", "sessions", "list", "-w", str(workspace), *args],
                              env=env, capture_output=True, text=True, timeout=60)

    listed = cli("--query", "astral", "--since", "1d")
    assert listed.returncode == 0, listed.stderr
    assert emoji in listed.stdout and loader not in listed.stdout
    assert "astral emoji are dropped" in listed.stdout
    assert loader not in cli("--until", "2000-01-01").stdout
    bad = cli("--since", "last tuesday")
    assert bad.returncode == 2 and "'last tuesday' is not a date" in bad.stderr and "Traceback" not in bad.stderr
