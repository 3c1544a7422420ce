"""Fork (R11.5) and torn/corrupt file handling."""

import json

import pytest

from agent_lsp.agent import Agent, AgentOptions
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import CorruptSessionError, SessionStore


def make(store, script):
    session = store.create()
    agent = Agent(session, providers={"scripted": ScriptedProvider(script)},
                  options=AgentOptions(provider="scripted", model="m"))
    return agent


async def two_turns(store):
    agent = make(store, [{"text": "one"}, {"text": "two"}])
    agent.followup("first")
    await agent.when_idle()
    agent.followup("second")
    await agent.when_idle()
    return agent


def turn_end_seq(session, n):
    return [e.seq for e in session.events if e.type == "turn/end"][n - 1]


async def test_r11_5_fork_at_a_turn_boundary_continues_turns_and_keeps_history(tmp_path):
    store = SessionStore(tmp_path)
    parent = await two_turns(store)
    boundary = turn_end_seq(parent.session, 1)
    child = store.fork(parent.session_id, boundary, title="what if")
    assert child.id != parent.session_id
    assert child.parent_session == parent.session_id and child.inherited_length == boundary + 1
    assert [e.to_json() for e in child.events[: boundary + 1]] == [e.to_json() for e in parent.session.events[: boundary + 1]]
    assert child.events[-1].type == "session/end-seed" and child.events[-1].data == {"seedLength": boundary + 1}
    texts = [m["content"][0]["text"] for m in Agent(child, providers={}, options=AgentOptions(provider="x", model="y")).derive_messages()]
    assert texts == ["first", "one"]
    agent = Agent(child, providers={"scripted": ScriptedProvider([{"text": "branch"}])},
                  options=AgentOptions(provider="scripted", model="m"))
    agent.followup("alternative")
    await agent.when_idle()
    assert [e.data["turn"] for e in child.events if e.type == "turn/start"] == [1, 2]
    assert [e.data["reason"] for e in child.events if e.type == "request/header"] == ["initial", "resume"]
    # the parent is untouched, and the child survives a reload with its header facts
    assert len(SessionStore(tmp_path).load(parent.session_id).events) == len(parent.session.events) + 1
    await agent.dispose()
    again = SessionStore(tmp_path).load(child.id)
    assert again.parent_session == parent.session_id and again.inherited_length == boundary + 1
    summary = {s.id: s for s in SessionStore(tmp_path).list()}[child.id]
    assert summary.parent == parent.session_id and summary.title == "what if" and summary.turns == 2


async def test_r11_5_fork_inside_an_open_turn_is_refused(tmp_path):
    store = SessionStore(tmp_path)
    parent = await two_turns(store)
    inside = [e.seq for e in parent.session.events if e.type == "step/start"][0]
    with pytest.raises(ValueError, match="inside open turn 1"):
        store.fork(parent.session_id, inside)
    with pytest.raises(ValueError, match="outside"):
        store.fork(parent.session_id, 10_000)
    running = make(store, [{"hang": "x"}])
    running.followup("go")  # the live log now ends inside turn 1
    with pytest.raises(ValueError, match="inside open turn"):
        store.fork(running.session_id)
    running.cancel()
    await running.when_idle()
    assert store.fork(running.session_id).last_turn() == 1


async def test_r2_12_fork_does_not_inherit_the_parents_pending_inbox(tmp_path):
    store = SessionStore(tmp_path)
    parent = await two_turns(store)
    parent.inject("parent-only context")
    assert parent.inbox.next_step
    child = store.fork(parent.session_id)
    agent = Agent(child, providers={}, options=AgentOptions(provider="x", model="y"))
    assert agent.inbox.next_step == [] and agent.inbox.next_turn == []
    # while a resume of the parent itself keeps it (R11.4)
    await parent.dispose()
    resumed = Agent(SessionStore(tmp_path).load(parent.session_id), providers={},
                    options=AgentOptions(provider="x", model="y"))
    assert [m["content"][0]["text"] for m in resumed.inbox.next_step] == ["parent-only context"]


async def test_r11_5_fork_of_a_cold_file_reads_without_modifying_it(tmp_path):
    store = SessionStore(tmp_path)
    parent = await two_turns(store)
    await parent.dispose()
    path = store.path_of(parent.session_id)
    before = path.read_bytes()
    child = SessionStore(tmp_path).fork(parent.session_id, turn_end_seq(parent.session, 2))
    assert path.read_bytes() == before
    assert child.last_turn() == 2


# ------------------------------------------------------- torn and corrupt files


def write_session(store, n_turns=1):
    s = store.create()
    for t in range(1, n_turns + 1):
        s.append("turn/start", {"turn": t})
        s.append("turn/end", {"turn": t, "reason": {"kind": "completed"}})
    s.flush()
    return s.id


def test_i9_complete_last_line_without_newline_is_kept(tmp_path):
    store = SessionStore(tmp_path)
    sid = write_session(store)
    path = store.path_of(sid)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the crash came before the newline
    loaded = SessionStore(tmp_path).load(sid)
    assert [e.type for e in loaded.events] == ["turn/start", "turn/end", "session/end-seed"]
    assert [json.loads(line)["seq"] for line in path.read_text().splitlines()[1:]] == [0, 1, 2]


def test_i9_torn_multibyte_tail_is_dropped_and_repaired(tmp_path):
    store = SessionStore(tmp_path)
    sid = write_session(store)
    path = store.path_of(sid)
    line = json.dumps({"seq": 2, "time": 1, "type": "turn/start", "data": {"turn": 2, "note": "é€"}},
                      ensure_ascii=False).encode()
    with open(path, "ab") as f:
        f.write(line[: line.index("€".encode()) + 1])  # cut inside a UTF-8 sequence
    loaded = SessionStore(tmp_path).load(sid)
    assert [e.type for e in loaded.events] == ["turn/start", "turn/end", "session/end-seed"]
    # what was cut off is kept, byte for byte, and never listed as a session
    assert path.with_name(path.name + ".torn").read_bytes() == line[: line.index("€".encode()) + 1] + b"\n"
    loaded.close()
    assert [s.id for s in SessionStore(tmp_path).list()] == [sid]
    SessionStore(tmp_path).load(sid)  # and the repaired file loads again
    assert SessionStore(tmp_path).delete(sid) and list(tmp_path.glob(f"{sid}*")) == []


def test_i9_torn_tail_inside_an_open_turn_is_crash_repaired(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    s.append("turn/start", {"turn": 1})
    s.append("step/start", {"turn": 1, "step": 1})
    s.flush()
    with open(store.path_of(s.id), "a") as f:
        f.write('{"seq":2,"time":5,"type":"assistant/ch')
    loaded = SessionStore(tmp_path).load(s.id)
    assert [e.type for e in loaded.events][2:] == ["step/end", "turn/end", "session/end-seed"]
    assert loaded.events[3].data["reason"] == {"kind": "interrupted"}


def test_i9_corrupt_middle_line_and_seq_gap_name_path_and_line(tmp_path):
    store = SessionStore(tmp_path)
    gap, fine = write_session(store, 2), write_session(store)
    path = store.path_of(gap)
    lines = path.read_text().splitlines()
    lines[3] = lines[3].replace('"seq":2', '"seq":7')
    path.write_text("\n".join(lines) + "\n")
    fresh = SessionStore(tmp_path)
    with pytest.raises(CorruptSessionError) as info:
        fresh.load(gap)
    assert (info.value.path, info.value.line) == (path, 4) and "seq 7" in str(info.value)
    assert fresh.load(fine).events[0].type == "turn/start"  # the others still load
    bad_header = store.path_of(write_session(store))
    bad_header.write_text("{}\n" + "\n".join(bad_header.read_text().splitlines()[1:]) + "\n")
    with pytest.raises(CorruptSessionError) as info:
        fresh.load(bad_header.stem)
    assert info.value.line == 1
    listed = {x.id for x in fresh.list()}
    assert bad_header.stem not in listed and fine in listed
    assert [e.path for e in fresh.list_errors] == [bad_header]


def test_i9_a_failed_batch_write_never_breaks_append_and_the_checkpoint_retries(tmp_path):
    from agent_lsp.store.session import BATCH_LINES

    store = SessionStore(tmp_path / "d")
    s = store.create()
    path = store.path_of(s.id)
    header = path.read_bytes()
    path.unlink()
    path.mkdir()  # writing the file now fails (IsADirectoryError)
    for i in range(BATCH_LINES * 2 + 5):
        s.append("x/y", {"i": i})  # batches fail quietly; the events are committed in memory
    assert len(s.events) == BATCH_LINES * 2 + 5
    with pytest.raises(OSError):
        s.flush()  # a checkpoint reports the failure
    path.rmdir()
    path.write_bytes(header)
    s.flush()
    assert len(SessionStore(tmp_path / "d").load(s.id).events) == BATCH_LINES * 2 + 5 + 1
