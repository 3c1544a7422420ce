"""The JSONL session store: create, append/flush, load, list, delete, repair."""

import json
import time

import pytest

from agent_lsp.store import CorruptSessionError, SessionStore


def user_message(text):
    return {"turn": 1, "step": 1, "message": {"role": "user", "id": "m", "source": "user",
                                               "content": [{"type": "text", "text": text}]}, "surfaceOp": "append"}


def one_turn(session, text="hello"):
    session.append("turn/start", {"turn": session.last_turn() + 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("user/message", user_message(text))
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})


def test_create_append_flush_load_roundtrip(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create(meta={"workspace": "/w"})
    assert s.id.startswith("s_")
    one_turn(s)
    s.flush()
    other = SessionStore(tmp_path).load(s.id)
    assert [e.to_json() for e in other.events[:-1]] == [e.to_json() for e in s.events]
    assert other.events[-1].type == "session/end-seed"
    assert other.meta == {"workspace": "/w"}
    assert other.surface == [2]


def test_events_buffered_until_flush(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    s.append("custom/event", {"n": 1})
    assert len(store.path_of(s.id).read_text().splitlines()) == 1  # header only: batched
    s.flush()
    assert len(store.path_of(s.id).read_text().splitlines()) == 2


def test_load_of_a_live_session_returns_it(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    assert store.load(s.id) is s


def test_truncated_last_line_is_repaired(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    one_turn(s)
    s.flush()
    path = store.path_of(s.id)
    with open(path, "a") as f:
        f.write('{"seq": 5, "time": 1, "type": "turn/st')  # a crash mid-write
    loaded = SessionStore(tmp_path).load(s.id)
    assert [e.type for e in loaded.events][-2:] == ["turn/end", "session/end-seed"]
    # the file is whole again: every line parses
    for line in path.read_text().splitlines():
        json.loads(line)


def test_corrupt_file_reports_path_and_line_and_others_still_load(tmp_path):
    store = SessionStore(tmp_path)
    good = store.create()
    one_turn(good, "good one")
    good.flush()
    bad = store.create()
    one_turn(bad)
    bad.flush()
    path = store.path_of(bad.id)
    lines = path.read_text().splitlines()
    lines[2] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    fresh = SessionStore(tmp_path)
    with pytest.raises(CorruptSessionError) as info:
        fresh.load(bad.id)
    assert info.value.path == path and info.value.line == 3
    assert str(path) in str(info.value)
    assert fresh.load(good.id).events[0].type == "turn/start"
    listed = fresh.list()
    # listing skips the damaged file and reports it with its path and line
    assert [x.id for x in listed] == [good.id]
    assert [(e.path, e.line) for e in fresh.list_errors] == [(path, 3)]


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_listing_names_a_damaged_event_line_wherever_it_is(tmp_path, where):
    store = SessionStore(tmp_path)
    session = store.create()
    one_turn(session)
    session.flush()
    path = store.path_of(session.id)
    lines = path.read_text().splitlines()
    at = {"first": 1, "middle": len(lines) // 2, "last": len(lines) - 1}[where]
    lines[at] = lines[at].rstrip("}") + ","  # a line cut short: it does not end its object
    path.write_text("\n".join(lines) + "\n")
    fresh = SessionStore(tmp_path)
    assert fresh.list() == []
    assert [(e.path, e.line) for e in fresh.list_errors] == [(path, at + 1)]


def test_list_titles_turns_newest_first_and_skips_corrupt(tmp_path):
    store = SessionStore(tmp_path)
    a = store.create()
    one_turn(a, "first session " * 20)
    a.flush()
    time.sleep(0.01)
    b = store.create(title="named")
    one_turn(b, "second")
    b.flush()
    (tmp_path / "junk.jsonl").write_text("garbage\n")
    listed = store.list()
    assert [x.id for x in listed] == [b.id, a.id]
    assert listed[0].title == "named"
    assert listed[1].title.startswith("first session") and len(listed[1].title) <= 80
    assert listed[1].turns == 1 and listed[1].event_count == 5
    assert listed[1].updated >= listed[1].created
    assert [e.path.name for e in store.list_errors] == ["junk.jsonl"]


def test_delete(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    assert store.delete(s.id) is True
    assert store.delete(s.id) is False
    assert store.list() == []
    s.append("x/y", {})
    s.flush()  # a detached live session never recreates the file
    assert not store.path_of(s.id).exists()


def test_path_of_rejects_traversal(tmp_path):
    store = SessionStore(tmp_path)
    with pytest.raises(ValueError):
        store.path_of("../etc")


def test_invalid_persisted_splice_fails_loudly(tmp_path):
    from agent_lsp.agent import Agent, AgentOptions

    store = SessionStore(tmp_path)
    s = store.create()
    s.append("agent/inbox/spliced", {"target": "next-turn", "start": 3, "removedCount": 1, "inserted": []})
    with pytest.raises(ValueError, match="invalid persisted splice"):
        Agent(s, providers={}, options=AgentOptions(provider="x", model="y"))


def test_seqs_contiguous_and_observer_order_with_nested_append(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    seen_a, seen_b = [], []

    def a(e):
        seen_a.append(e.seq)
        if e.type == "one":
            s.append("two", {})

    s.subscribe(a)
    s.subscribe(lambda e: seen_b.append(e.seq))
    s.append("one", {})
    assert seen_a == [0, 1] and seen_b == [0, 1]


def test_throwing_observer_is_contained(tmp_path):
    s = SessionStore(tmp_path).create()
    s.subscribe(lambda e: 1 / 0)
    got = []
    s.subscribe(got.append)
    s.append("x", {})
    assert len(got) == 1


async def test_load_after_dispose_reads_the_file_afresh(tmp_path):
    from agent_lsp.agent import Agent, AgentOptions
    from agent_lsp.llm.scripted import ScriptedProvider

    store = SessionStore(tmp_path)
    s = store.create()
    agent = Agent(s, providers={"scripted": ScriptedProvider([{"text": "ok"}])},
                  options=AgentOptions(provider="scripted", model="m"))
    got = []
    s.subscribe(got.append)
    agent.followup("hi")
    await agent.when_idle()
    await agent.dispose()
    again = store.load(s.id)
    assert again is not s and again.resumed
    assert [e.to_json() for e in again.events[:-1]] == [e.to_json() for e in s.events]
    n = len(got)
    again.append("x/y", {})
    assert len(got) == n  # the old observers are gone with the old session


def _first_message(session, message):
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("user/message", {"turn": 1, "step": 1, "message": message, "surfaceOp": "append"})
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    session.flush()


def test_a_title_is_the_users_words_not_the_attached_context_or_image_placeholders(tmp_path):
    from agent_lsp.agent.inbox import make_message

    store = SessionStore(tmp_path)
    selection = {"kind": "selection", "uri": "file:///ws/my%20app.py", "range": {}, "text": "x = 1\n" * 50}
    cases = {
        "words": make_message("explain   this\nplease", context=[selection]),
        "long": make_message("why " * 40, context=[{"kind": "file", "uri": "file:///ws/a.py"}]),
        "blocks": make_message([{"type": "text", "text": "see "}, {"type": "text", "text": "here"}],
                               context=[{"kind": "file", "uri": "file:///ws/a.py"}, {"type": "text", "text": "pasted"}]),
        "only": make_message("  ", context=[selection, {"kind": "diagnostic", "uri": "file:///ws/b.py", "message": "E1"},
                                            {"kind": "file", "uri": "file:///ws/b.py"}]),
        "nothing": make_message("", context=[{"type": "text", "text": "pasted"}]),
        # images as the server stores them: a placeholder before each reference
        "image": make_message([{"type": "text", "text": "why red?"}, {"type": "text", "text": "[image: a.png, image/png, 9 KB]"},
                               {"type": "image", "mediaType": "image/png", "file": "ab.png", "name": "a.png"}]),
        "image only": make_message([{"type": "text", "text": "[image: a.png, image/png, 9 KB]"},
                                    {"type": "image", "mediaType": "image/png", "file": "ab.png", "name": "a.png"}]),
    }
    ids = {}
    for name, message in cases.items():
        session = store.create()
        _first_message(session, message)
        ids[session.id] = name
    titles = {ids[s.id]: s.title for s in store.list()}
    assert titles["words"] == "explain this please"
    assert titles["long"] == ("why " * 40)[:79] + "…"  # the usual truncation
    assert titles["blocks"] == "see here"
    assert titles["only"] == "(context only: my app.py, b.py)"
    assert titles["nothing"] == "(context only)"
    assert titles["image"] == "why red?"
    assert titles["image only"] == "[image: a.png, image/png, 9 KB]"
    assert not any("context>" in t or "x = 1" in t for t in titles.values())
