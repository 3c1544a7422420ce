"""The chunks of a finished message live in the session file only, and read back
exactly; pages of the log merge deltas the way live coalescing does."""

from __future__ import annotations

import json

from agent_lsp.store import SessionStore
from agent_lsp.store.replay import page_backward, page_forward


def stream_turn(session, turn: int, text: str, *, reasoning: str = "", odd: bool = False) -> None:
    """One turn as the loop logs it: a chunk per character, then the message."""
    session.append("turn/start", {"turn": turn})
    session.append("step/start", {"turn": turn, "step": 1})
    for kind, body in (("reasoning", reasoning), ("text", text)):
        if not body:
            continue
        session.append("assistant/chunk", {"turn": turn, "step": 1, "chunk": {"type": f"{kind}-start"}})
        for ch in body:
            chunk = {"type": f"{kind}-delta", "text": ch}
            if odd:
                chunk["providerMeta"] = {"n": 1}  # a provider's extra key: not the usual line shape
            session.append("assistant/chunk", {"turn": turn, "step": 1, "chunk": chunk})
        session.append("assistant/chunk", {"turn": turn, "step": 1, "chunk": {"type": f"{kind}-end"}})
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    session.append("assistant/message", {"turn": turn, "step": 1, "message": message, "surfaceOp": "append"})
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def test_finished_chunks_leave_memory_and_read_back_exactly(tmp_path):
    store = SessionStore(tmp_path)
    session = store.create()
    seen = []
    session.subscribe(lambda e: seen.append(json.loads(json.dumps(e.to_json()))))
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    for ch in "héllo \"wörld\"\n":
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": ch}})
    assert session.events.in_memory() == len(session.events)  # the message still streams
    session.append("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": []}})
    assert session.events.in_memory() == 3
    assert [e.to_json() for e in session.events] == seen
    assert [e.to_json() for e in reversed(session.events)] == seen[::-1]
    assert [e.to_json() for e in session.events[2:5]] == seen[2:5]
    assert session.events[-2].data["chunk"]["text"] == "\n" and session.events[4].time == seen[4]["time"]
    stream_turn(session, 2, "second")
    session.close()
    reloaded = store.load(session.id)
    assert [e.to_json() for e in reloaded.events][: len(seen)] == seen
    assert reloaded.events.in_memory() < len(reloaded.events) / 2


def test_a_fork_of_a_session_with_released_chunks_copies_them(tmp_path):
    store = SessionStore(tmp_path)
    source = store.create()
    stream_turn(source, 1, "abc")
    child = store.fork(source.id)
    assert [e.to_json() for e in child.events][: len(source.events)] == [e.to_json() for e in source.events]
    child.close()
    lines = store.path_of(child.id).read_text(encoding="utf-8").splitlines()[1:]
    assert [json.loads(line) for line in lines][: len(source.events)] == [e.to_json() for e in source.events]


def test_pages_merge_runs_of_deltas_and_never_split_them(tmp_path):
    store = SessionStore(tmp_path)
    session = store.create()
    stream_turn(session, 1, "answer one", reasoning="why")
    stream_turn(session, 2, "odd ✓ shape", odd=True)
    stream_turn(session, 3, "three")
    session.close()
    for log in (session.events, store.load(session.id).events):  # live, and read from the file
        whole = page_forward(log, 0, 1000)
        assert whole.start == 0 and whole.next == whole.end == len(log)
        deltas = [e for e in whole.events if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"].endswith("-delta")]
        assert [d["data"]["chunk"]["text"] for d in deltas] == ["why", "answer one", "odd ✓ shape", "three"]
        assert deltas[2]["data"]["chunk"]["providerMeta"] == {"n": 1}  # the first delta's other keys stay
        for d in deltas:
            assert d["lastSeq"] == d["seq"] + len(d["data"]["chunk"]["text"]) - 1
        for limit in (1, 2, 3, 5):
            forward, seq = [], 0
            while seq < len(log):
                page = page_forward(log, seq, limit)
                assert 1 <= len(page.events) <= limit
                forward += page.events
                seq = page.next
            backward, seq = [], None
            while seq != 0:
                page = page_backward(log, seq, limit)
                backward = page.events + backward
                seq = page.start
            assert forward == backward == whole.events


def test_a_long_message_names_its_chunks_exactly_and_keeps_them_small(tmp_path):
    """A 2,000-delta message's `sourceEventSeqs`: the file, what a client is sent
    and a reload hold the plain list; the open session holds it in a few hundred
    bytes, not one int object per delta."""
    import gc
    import tracemalloc

    store = SessionStore(tmp_path)
    session = store.create()
    session.append("turn/start", {"turn": 1})
    seqs = [session.append("assistant/chunk", {"turn": 1, "chunk": {"type": "text-delta", "text": "x"}}).seq
            for _ in range(2000)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    data = {"turn": 1, "message": {"role": "assistant", "content": []}, "sourceEventSeqs": [*seqs, 5000]}
    message = session.append("assistant/message", data)
    del data
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    assert grown < 16_000  # the list alone is ~72 KB
    assert message.data["sourceEventSeqs"] == [*seqs, 5000] and len(message.data["sourceEventSeqs"]) == 2001
    assert message.data["sourceEventSeqs"][-1] == 5000 and list(message.data["sourceEventSeqs"])[:2] == seqs[:2]
    sent = json.loads(json.dumps(message.to_json()))  # what the relay sends
    assert sent["data"]["sourceEventSeqs"] == [*seqs, 5000]
    session.close()
    line = (tmp_path / f"{session.id}.jsonl").read_text().splitlines()[-1]
    assert json.loads(line)["data"]["sourceEventSeqs"] == [*seqs, 5000]
    reloaded = store.load(session.id)
    assert reloaded.events[message.seq].to_json() == sent
