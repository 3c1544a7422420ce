"""Session titles written by the model (`sessions.titles = "model"`) and
renames, through the real server with a real local HTTP model server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402


def answer(text: str) -> Reply:
    return Reply.openai_text(text, usage={"prompt_tokens": 40, "completion_tokens": 6})


def settings_for(fake: FakeServer, sessions: Path, **titles) -> dict:
    return {"model": {"provider": "openai", "model": "main-model", "baseUrl": fake.url + "/v1", "apiKey": "k"},
            "sessionsDir": str(sessions), "sessions": titles}


async def first_turn(editor, content: str) -> str:
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": content}))["sessionId"]
    await editor.wait_idle(sid, before)
    return sid


async def listed_title(editor, sid: str) -> str:
    sessions = (await editor.request("agent/session/list", {}))["sessions"]
    return next(s["title"] for s in sessions if s["sessionId"] == sid)


async def test_the_model_titles_a_session_after_its_first_turn_and_the_list_shows_it(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    fake = FakeServer()
    await fake.start()
    fake.queue(answer("The parser test fails because the fixture path is relative."),
               answer('Title: "Fixing the flaky parser test fixture path."\nExtra line'))
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions,
                                  settings=settings_for(fake, sessions, titles="model", titleModel="small-model")) as editor:
            sid = await first_turn(editor, "why does test_parser fail on CI but not locally?")
            event = await editor.wait_for(
                lambda: next((e for e in editor.events[sid] if e["type"] == "session/title"), None), what="session/title")
            assert await listed_title(editor, sid) == "Fixing the flaky parser test fixture path"
            # the user's name wins from then on; a bad one is refused with a readable error
            renamed = await editor.request("agent/session/rename", {"sessionId": sid, "title": "  CI   parser  "})
            assert renamed == {"title": "CI parser"}
            assert await listed_title(editor, sid) == "CI parser"
            with pytest.raises(JsonRpcInvalidParams, match="empty title"):
                await editor.request("agent/session/rename", {"sessionId": sid, "title": "   "})
            replayed = (await editor.request("agent/session/replay", {"sessionId": sid}))["events"]
    finally:
        await fake.stop()

    assert event["data"] == {"title": "Fixing the flaky parser test fixture path", "source": "model",
                             "model": "small-model", "usage": event["data"]["usage"]}
    turn, titling = fake.requests
    assert titling.body["model"] == "small-model" and turn.body["model"] == "main-model"
    assert "tools" not in titling.body and titling.body["max_tokens"] <= 64
    asked = json.dumps(titling.body["messages"])
    assert "why does test_parser fail on CI" in asked and "fixture path is relative" in asked
    assert [e["data"]["source"] for e in replayed if e["type"] == "session/title"] == ["model", "user"]


async def test_a_failing_title_request_keeps_the_first_message_title_and_the_session_goes_on(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    fake = FakeServer()
    await fake.start()
    fake.queue(answer("First answer."), Reply.json(400, {"error": {"message": "model small-model does not exist"}}),
               answer("Second answer."))
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions,
                                  settings=settings_for(fake, sessions, titles="model", titleModel="small-model")) as editor:
            sid = await first_turn(editor, "rename the config loader")
            await editor.wait_for(lambda: len(fake.requests) == 2, what="the title request")
            before = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "thanks, and the docs?"})
            await editor.wait_idle(sid, before)
            assert await listed_title(editor, sid) == "rename the config loader"
            ends = [e["data"]["reason"]["kind"] for e in editor.events[sid] if e["type"] == "turn/end"]
            assert "session/title" not in editor.event_types(sid)
    finally:
        await fake.stop()
    assert ends == ["completed", "completed"]
    assert len(fake.requests) == 3  # one title request, not retried at the second turn


async def test_titles_stay_the_first_message_by_default(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    fake = FakeServer()
    await fake.start()
    fake.queue(answer("Done."))
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions,
                                  settings=settings_for(fake, sessions)) as editor:
            sid = await first_turn(editor, "add a changelog entry")
            assert await listed_title(editor, sid) == "add a changelog entry"
    finally:
        await fake.stop()
    assert len(fake.requests) == 1
