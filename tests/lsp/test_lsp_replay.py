"""agent/session/replay over the wire: a session's log in pages, deltas merged,
from the live server and from a fresh one reading the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcInvalidParams

from lsp_harness import EditorUnderTest, running_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANSWERS = ["first answer " * 150, "second, longer answer " * 200, "third ✓ answer with \"quotes\"\n" * 60]
THOUGHT = "thinking it over " * 40


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ws")


@pytest.fixture(scope="module")
def sessions_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sessions")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(workspace, sessions_dir):
    async with running_server(folders=[workspace], sessions_dir=sessions_dir) as editor:
        yield editor


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def long_session(editor: EditorUnderTest) -> str:
    """Three turns of thousands of streamed deltas (one per character)."""
    editor.use_script([{"reasoning": THOUGHT, "text": ANSWERS[0]}, {"text": ANSWERS[1]}, {"text": ANSWERS[2]}])
    sid = None
    for n in range(3):
        before = len(editor.statuses)
        ref = await editor.request("agent/followup", {"sessionId": sid, "content": f"question {n}"} if sid else
                                   {"content": "question 0"})
        sid = ref["sessionId"]
        await editor.wait_idle(sid, before)
    return sid


async def replay_all(editor: EditorUnderTest, sid: str, direction: str, limit: int) -> list[dict]:
    pages = []
    seq = None
    while True:
        params = {"sessionId": sid, "direction": direction, "limit": limit}
        if seq is not None:
            params["seq"] = seq
        page = await editor.request("agent/session/replay", params)
        pages.append(page)
        if direction == "forward":
            if page["nextSeq"] >= page["endSeq"]:
                break
            seq = page["nextSeq"]
        else:
            if page["startSeq"] == 0:
                break
            seq = page["startSeq"]
    if direction == "backward":
        pages.reverse()
    for a, b in zip(pages, pages[1:]):
        assert a["nextSeq"] == b["startSeq"]  # contiguous pages, nothing twice, nothing missing
    return pages


def expand(events: list[dict]) -> list[tuple[int, str]]:
    """(seq, text) per covered seq of the deltas, to compare merged and unmerged logs."""
    covered = []
    for e in events:
        covered.extend(range(e["seq"], e.get("lastSeq", e["seq"]) + 1))
    return covered


def texts(events: list[dict], kind: str) -> str:
    return "".join(e["data"]["chunk"].get("text", "") for e in events
                   if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == kind)


async def test_forward_pages_merge_the_deltas_and_cover_the_whole_log(editor, long_session):
    sid = long_session
    loaded = await editor.request("agent/session/load", {"sessionId": sid})
    pages = await replay_all(editor, sid, "forward", limit=7)
    assert len(pages) > 2
    events = [e for p in pages for e in p["events"]]
    assert expand(events) == list(range(len(loaded["events"])))
    assert pages[-1]["nextSeq"] == pages[-1]["endSeq"] == len(loaded["events"])
    # a message's thousands of deltas arrive as one event per text block
    assert len(events) < len(loaded["events"]) / 20
    assert texts(events, "text-delta") == "".join(ANSWERS) == texts(loaded["events"], "text-delta")
    assert texts(events, "reasoning-delta") == THOUGHT
    merged = [e for e in events if "lastSeq" in e]
    assert {e["data"]["chunk"]["type"] for e in merged} == {"text-delta", "reasoning-delta"}
    by_seq = {e["seq"]: e for e in loaded["events"]}
    for e in events:  # every other event exactly as stored
        if "lastSeq" not in e:
            assert e == by_seq[e["seq"]]
    assert pages[0]["status"] == "idle" and pages[0]["inbox"] == {"nextTurn": [], "nextStep": []}


async def test_newest_page_first_then_backward_gives_the_same_events(editor, long_session):
    sid = long_session
    newest = await editor.request("agent/session/replay", {"sessionId": sid, "direction": "backward", "limit": 5})
    assert newest["nextSeq"] == newest["endSeq"] and len(newest["events"]) == 5
    assert newest["events"][-1]["type"] == "turn/end"
    forward = [e for p in await replay_all(editor, sid, "forward", limit=50) for e in p["events"]]
    backward = [e for p in await replay_all(editor, sid, "backward", limit=4) for e in p["events"]]
    assert backward == forward


async def test_a_fresh_server_replays_the_file_identically(editor, long_session, workspace, sessions_dir):
    before = [e for p in await replay_all(editor, long_session, "forward", limit=20) for e in p["events"]]
    loaded_before = await editor.request("agent/session/load", {"sessionId": long_session})
    await editor.kill()  # the file alone, as after a crash or a restart
    async with running_server(folders=[workspace], sessions_dir=sessions_dir) as fresh:
        after = [e for p in await replay_all(fresh, long_session, "forward", limit=20) for e in p["events"]]
        loaded_after = await fresh.request("agent/session/load", {"sessionId": long_session})
    # the fresh load appends its end-of-seed marker; everything before it is the same
    assert after[: len(before)] == before
    assert [e["type"] for e in after[len(before):]] == ["session/end-seed"]
    assert loaded_after["events"][: len(loaded_before["events"])] == loaded_before["events"]


async def test_bad_replay_params_are_readable_errors(workspace, tmp_path):
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions") as editor:
        created = await editor.request("agent/session/new", {})
        sid = created["sessionId"]
        for params, field in [({"sessionId": sid, "limit": 0}, "limit"), ({"sessionId": sid, "direction": "up"}, "direction"),
                              ({"sessionId": sid, "seq": -1}, "seq"), ({"limit": 5}, "sessionId")]:
            with pytest.raises(JsonRpcInvalidParams) as info:
                await editor.request("agent/session/replay", params)
            assert field in info.value.message
        with pytest.raises(JsonRpcInvalidParams) as info:
            await editor.request("agent/session/replay", {"sessionId": "s_nope"})
        assert "unknown session s_nope" in info.value.message
        empty = await editor.request("agent/session/replay", {"sessionId": sid, "seq": 10})
        assert empty["events"] == [] and empty["startSeq"] == empty["nextSeq"] == empty["endSeq"]


async def test_replay_of_a_running_session_continues_exactly_with_live_events(workspace, tmp_path):
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions") as editor:
        editor.use_script([{"hang": "partial answer " * 50}])
        before = len(editor.statuses)
        ref = await editor.request("agent/followup", {"content": "go"})
        sid = ref["sessionId"]
        await editor.wait_for(lambda: editor.streamed_text(sid).endswith("answer "), what="the partial text")
        page = await editor.request("agent/session/replay", {"sessionId": sid, "direction": "backward"})
        assert page["status"] == "running" and page["nextSeq"] == page["endSeq"]
        end = page["endSeq"]
        await editor.request("agent/cancel", {"sessionId": sid})
        await editor.wait_idle(sid, before)
        live_after = [e for e in editor.events[sid] if e["seq"] >= end]
        assert live_after and live_after[0]["seq"] == end  # the next live event is the page's endSeq
        replayed = [e for p in await replay_all(editor, sid, "forward", limit=1000) for e in p["events"]]
        assert expand([e for e in replayed if e["seq"] < end]) == list(range(end))
        assert texts(replayed, "text-delta") == editor.streamed_text(sid)
