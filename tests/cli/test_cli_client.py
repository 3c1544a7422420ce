"""The headless client in-process, against the real server subprocess (or a
broken one): failures are reported, never a hang."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path

import pytest

from agent_lsp.cli.client import HeadlessClient, ServerError
from agent_lsp.cli.permission_prompt import PermissionResponder
from agent_lsp.cli.terminal_input import LineReader
from agent_lsp.cli.transcript import Transcript

from cli_helpers import clean_env


def _quiet_transcript() -> Transcript:
    return Transcript(out=io.StringIO(), err=io.StringIO(), color=False)


async def test_a_server_that_cannot_start_is_explained(tmp_path: Path, workspace: Path):
    broken = [sys.executable, "-c", "import sys; sys.stderr.write('config is broken\\n'); sys.exit(3)"]
    client = HeadlessClient(workspace, transcript=_quiet_transcript(), server_command=broken)
    with pytest.raises(ServerError) as caught:
        await asyncio.wait_for(client.start(), 20)
    await client.close()
    assert "return code: 3" in str(caught.value)
    assert "config is broken" in str(caught.value)


@pytest.mark.skipif(sys.platform == "win32", reason="the agent's command is POSIX shell")
async def test_a_server_dying_mid_turn_ends_the_wait(tmp_path: Path, workspace: Path):
    # The agent's shell command kills the server process (its parent): outside the
    # sandbox, where a command cannot see the server.
    script = [{"text": "", "tools": [{"name": "run_command", "arguments": {"command": "kill -9 $PPID"}}]}]
    client = HeadlessClient(
        workspace,
        settings={"model": {"provider": "scripted", "script": script}, "sessionsDir": str(tmp_path / "s"),
                  "shell": {"sandbox": "off"}},
        transcript=_quiet_transcript(),
        permissions=PermissionResponder("allow", _quiet_transcript()),
        env=clean_env(tmp_path),
    )
    async with client:
        with pytest.raises(ServerError, match="exited"):
            await asyncio.wait_for(client.followup("go"), 20)


async def test_followup_result_carries_the_text_and_turn_end(tmp_path: Path, workspace: Path):
    settings = {"model": {"provider": "scripted", "script": [{"text": "first"}, {"text": "second"}]},
                "sessionsDir": str(tmp_path / "s")}
    transcript = _quiet_transcript()
    async with HeadlessClient(workspace, settings=settings, transcript=transcript, env=clean_env(tmp_path)) as client:
        one = await asyncio.wait_for(client.followup("a"), 20)
        two = await asyncio.wait_for(client.followup("b", session_id=one.session_id), 20)
    assert (one.text, two.text) == ("first", "second")
    assert one.ok and two.ok and one.session_id == two.session_id
    assert transcript.out.getvalue() == "first\nsecond\n"


# --------------------------------------------------------------- permissions


async def _answers(mode, typed: str, request: dict | None = None) -> tuple[str, str]:
    transcript = _quiet_transcript()
    responder = PermissionResponder(mode, transcript, LineReader(io.StringIO(typed)))
    answer = await responder.answer(request or {"tool": "run_command", "title": "Run `make`", "kind": "command"})
    return answer, transcript.err.getvalue()


async def test_permission_from_flags():
    assert (await _answers("allow", ""))[0] == "once"
    assert (await _answers("deny", ""))[0] == "deny"


async def test_permission_without_a_terminal_is_denied():
    answer, said = await _answers(None, "y\n")  # a pipe, not a terminal: nobody to ask
    assert answer == "deny"
    assert "--yes" in said


@pytest.mark.parametrize(("typed", "answer"), [("y\n", "once"), ("s\n", "session"), ("a\n", "always"),
                                               ("\n", "deny"), ("what?\nY\n", "once"), ("", "deny")])
async def test_permission_asked_at_the_terminal(typed: str, answer: str):
    got, said = await _answers("ask", typed, {"tool": "run_command", "title": "Run `make`", "kind": "command",
                                              "detail": "make -j4"})
    assert got == answer
    assert "Run `make`" in said and "make -j4" in said


async def test_generic_permission_dialog_picks_the_matching_action():
    transcript = _quiet_transcript()
    actions = [{"title": "Allow once"}, {"title": "Allow for session"}, {"title": "Always allow"}, {"title": "Deny"}]
    allow = PermissionResponder("allow", transcript)
    deny = PermissionResponder("deny", transcript)
    params = {"type": 3, "message": "Run `make`?", "actions": actions}
    assert await allow.choose_action(params) == {"title": "Allow once"}
    assert await deny.choose_action(params) == {"title": "Deny"}
