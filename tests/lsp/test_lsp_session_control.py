"""Rewind, fork and the editable queue, through the real server and a real
HTTP model server (the requests the model gets are checked).

- rewind to before a turn: the next request holds the history up to there;
  the rewind is a durable event replay shows;
- fork at a turn: the new session's first request carries the shared
  history; the session list shows the family;
- queue edits: update, move, pause/resume, send-now and steer-now are inbox
  splices in the log, and the turns run the edited queue in its new order.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402

pytestmark = pytest.mark.asyncio


def answer(text: str) -> Reply:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
    finish = {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(finish)}\n\ndata: [DONE]\n\n".encode()
    return Reply.sse(body, awkward=False)


def said(request) -> list[tuple[str, str]]:
    """(role, text) of each message of a model request."""
    out = []
    for message in request.body["messages"]:
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or ())
        out.append((message["role"], text))
    # the conversation, without the fixed prompt (the system prompt and the folder's part, the first message)
    return [m for m in out if m[0] != "system" and not m[1].startswith("Workspace roots:")]


@pytest.fixture
async def model():
    fake = FakeServer()
    await fake.start()
    yield fake
    await fake.stop()


def settings(fake: FakeServer) -> dict:
    return {"model": {"provider": "openai", "baseUrl": f"{fake.url}/v1", "apiKey": "k", "model": "m"}}


async def turn(editor, content: str, session_id: str | None = None) -> str:
    statuses = len(editor.statuses)
    params = {"content": content, **({"sessionId": session_id} if session_id else {})}
    sid = (await editor.request("agent/followup", params))["sessionId"]
    await editor.wait_idle(sid, statuses)
    return sid


async def test_rewind_then_continue_sends_the_cut_history(tmp_path: Path, model: FakeServer):
    model.queue(answer("one"), answer("two"), answer("three"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        sid = await turn(editor, "first")
        await turn(editor, "second", sid)
        result = await editor.request("agent/session/rewind", {"sessionId": sid, "turn": 2})
        assert result == {"removedMessages": 2, "reverts": []}
        # turn 2 is gone from the history: rewinding to it again is refused with a reason
        with pytest.raises(JsonRpcInvalidParams, match="turn 2 is not in the history"):
            await editor.request("agent/session/rewind", {"sessionId": sid, "turn": 2})
        await turn(editor, "third", sid)
        assert said(model.requests[2]) == [("user", "first"), ("assistant", "one"), ("user", "third")]
        # replay shows the rewind between the turns; the turns stay in the log
        events = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
        kinds = [(e["type"], e["data"].get("turn")) for e in events if e["type"] in ("turn/start", "session/rewind")]
        assert kinds == [("turn/start", 1), ("turn/start", 2), ("session/rewind", 2), ("turn/start", 3)]
        with pytest.raises(JsonRpcInvalidParams, match="no turn 9"):
            await editor.request("agent/session/rewind", {"sessionId": sid, "turn": 9})
    # after a restart the history is still cut
    model.queue(answer("four"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        await turn(editor, "fourth", sid)
        assert said(model.requests[3]) == [("user", "first"), ("assistant", "one"), ("user", "third"),
                                           ("assistant", "three"), ("user", "fourth")]


async def test_a_rewound_session_compacts_and_goes_on_from_the_summary(tmp_path: Path, model: FakeServer):
    model.queue(answer("one " * 200), answer("two"), answer("what was said: a first message"), answer("three"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        sid = await turn(editor, "first " * 200)
        await turn(editor, "second", sid)
        await editor.request("agent/session/rewind", {"sessionId": sid, "turn": 2})
        assert await editor.request("agent/session/compact", {"sessionId": sid}) == {"compacted": True}
        await turn(editor, "third", sid)
        (checkpoint, last) = said(model.requests[3])
        assert "what was said: a first message" in checkpoint[1] and last == ("user", "third")


async def test_fork_shares_the_history_up_to_its_turn(tmp_path: Path, model: FakeServer):
    model.queue(answer("one"), answer("two"), answer("fork reply"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        sid = await turn(editor, "first")
        await turn(editor, "second", sid)
        child = (await editor.request("agent/session/fork", {"sessionId": sid, "turn": 1}))["sessionId"]
        assert child != sid
        await turn(editor, "other way", child)
        assert said(model.requests[2]) == [("user", "first"), ("assistant", "one"), ("user", "other way")]
        listed = {s["sessionId"]: s for s in (await editor.request("agent/session/list", {}))["sessions"]}
        assert (listed[child]["parentSessionId"], listed[child]["forkTurn"]) == (sid, 1)
        # the fork reads apart from its parent in the list
        assert (listed[sid]["title"], listed[child]["title"]) == ("first", "first (fork at turn 1)")
        assert listed[sid].get("parentSessionId") is None
        # the parent is unchanged
        parent = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
        assert [e["data"]["turn"] for e in parent if e["type"] == "turn/start"] == [1, 2]
        with pytest.raises(JsonRpcInvalidParams, match="no turn 5"):
            await editor.request("agent/session/fork", {"sessionId": sid, "turn": 5})


def splices(events: list[dict]) -> list[tuple]:
    return [(e["data"]["target"], e["data"]["start"], e["data"].get("removedCount", 0),
             [m["content"][0]["text"] for m in e["data"]["inserted"]], e["data"].get("outcome"))
            for e in events if e["type"] == "agent/inbox/spliced"]


async def test_a_paused_queue_is_edited_reordered_and_run_in_its_new_order(tmp_path: Path, model: FakeServer):
    model.queue(answer("r1"), answer("r2"), answer("r3"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        sid = (await editor.request("agent/session/new", {}))["sessionId"]
        assert await editor.request("agent/inbox/pause", {"sessionId": sid, "paused": True}) == {"paused": True}
        ids = [(await editor.request("agent/followup", {"sessionId": sid, "content": text}))["messageId"]
               for text in ("a", "b", "c")]
        assert model.requests == []  # paused: no turn starts
        assert await editor.request("agent/inbox/update", {"sessionId": sid, "messageId": ids[1], "content": "b edited"}) == {"updated": True}
        assert await editor.request("agent/inbox/move", {"sessionId": sid, "messageId": ids[2], "to": "next-turn", "index": 0}) == {"moved": True}
        loaded = await editor.request("agent/session/load", {"sessionId": sid})
        queue = [m["content"][0]["text"] for m in loaded["inbox"]["nextTurn"]]
        assert queue == ["c", "a", "b edited"]
        assert splices(loaded["events"])[3:] == [
            ("next-turn", 1, 1, ["b edited"], "edited"),
            ("next-turn", 0, 3, ["c", "a", "b edited"], "moved"),
        ]
        changed = editor.of("agent/inbox/changed")
        assert [m["content"][0]["text"] for m in changed[-1]["nextTurn"]] == queue and changed[-1]["paused"] is True
        with pytest.raises(JsonRpcInvalidParams, match="paused"):
            await editor.request("agent/inbox/move", {"sessionId": sid, "messageId": ids[0], "to": "now"})

        await editor.request("agent/inbox/pause", {"sessionId": sid, "paused": False})
        await editor.wait_for(lambda: editor.event_types(sid).count("turn/end") == 3, what="the three queued turns")
        assert [said(r)[-1] for r in model.requests] == [("user", "c"), ("user", "a"), ("user", "b edited")]


async def test_send_now_cancels_the_running_turn_and_starts_the_message(tmp_path: Path, model: FakeServer):
    model.queue(Reply.sse(b"", end="stall"), answer("now done"), answer("queued done"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        sid = (await editor.request("agent/followup", {"content": "long"}))["sessionId"]
        await editor.wait_for(lambda: model.stall_started.is_set(), what="the first turn's request")
        queued = (await editor.request("agent/followup", {"sessionId": sid, "content": "queued"}))["messageId"]
        urgent = (await editor.request("agent/followup", {"sessionId": sid, "content": "urgent"}))["messageId"]
        assert queued != urgent
        assert await editor.request("agent/inbox/move", {"sessionId": sid, "messageId": urgent, "to": "now"}) == {"moved": True}
        await editor.wait_for(lambda: editor.event_types(sid).count("turn/end") == 3, what="three turns")
        ends = [e["data"]["reason"]["kind"] for e in editor.events[sid] if e["type"] == "turn/end"]
        assert ends == ["aborted", "completed", "completed"]
        assert [said(r)[-1][1] for r in model.requests[1:]] == ["urgent", "queued"]


async def test_steer_now_while_idle_and_paused_starts_a_turn_with_that_message(tmp_path: Path, model: FakeServer):
    model.queue(answer("steered"))
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        sid = (await editor.request("agent/session/new", {}))["sessionId"]
        await editor.request("agent/inbox/pause", {"sessionId": sid, "paused": True})
        keep = (await editor.request("agent/followup", {"sessionId": sid, "content": "stays queued"}))["messageId"]
        steer = (await editor.request("agent/followup", {"sessionId": sid, "content": "go now"}))["messageId"]
        assert await editor.request("agent/inbox/move", {"sessionId": sid, "messageId": steer, "to": "next-step"}) == {"moved": True}
        await editor.wait_for(lambda: "turn/end" in editor.event_types(sid), what="the steered turn")
        assert [said(r)[-1][1] for r in model.requests] == ["go now"]
        loaded = await editor.request("agent/session/load", {"sessionId": sid})
        assert [m["id"] for m in loaded["inbox"]["nextTurn"]] == [keep]
        assert splices(loaded["events"])[2:4] == [("next-turn", 1, 1, [], "moved"), ("next-step", 0, 0, ["go now"], "moved")]


async def test_the_session_list_filters_by_title_and_update_time(tmp_path: Path, model: FakeServer):
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "s", settings=settings(model)) as editor:
        titles = [f"fix bug {i}" if i % 3 == 0 else f"write docs {i}" for i in range(30)]
        for title in titles:
            await editor.request("agent/session/new", {"title": title})
        every = (await editor.request("agent/session/list", {}))["sessions"]
        assert len(every) == 30
        bugs = (await editor.request("agent/session/list", {"query": "FIX BUG"}))["sessions"]
        assert sorted(s["title"] for s in bugs) == sorted(t for t in titles if t.startswith("fix bug"))
        newest = (await editor.request("agent/session/list", {"query": "docs", "limit": 2}))["sessions"]
        assert [s["sessionId"] for s in newest] == [s["sessionId"] for s in every if "docs" in s["title"]][:2]
        middle = sorted({s["updatedAt"] for s in every})[len(every) // 2]
        after = (await editor.request("agent/session/list", {"updatedAfter": middle}))["sessions"]
        before = (await editor.request("agent/session/list", {"updatedBefore": middle}))["sessions"]
        assert all(s["updatedAt"] >= middle for s in after) and all(s["updatedAt"] < middle for s in before)
        assert len(after) + len(before) == 30 and after and before
        with pytest.raises(JsonRpcInvalidParams, match="limit"):
            await editor.request("agent/session/list", {"limit": 0})
