"""Loop scenarios 1–13: turn order, inbox, pre-step, turn-stopping."""

import asyncio

from agent_lsp.agent.events import only
from agent_helpers import FnTool, events_of, make_agent, request_texts, settle, statuses, turn_ends, types_of


async def test_s01_simple_turn_order(tmp_path):
    agent = make_agent(tmp_path, [{"text": "abc"}])
    seen = statuses(agent)
    agent.followup("hi")
    await settle(agent)
    assert types_of(agent) == [
        "agent/inbox/spliced", "turn/start", "agent/inbox/spliced", "step/start", "user/message",
        "request/header", "request/context", *["assistant/chunk"] * 7, "assistant/message", "step/end", "turn/end",
    ]
    assert events_of(agent, "turn/end")[0].data["reason"] == {"kind": "completed"}
    assert seen == ["running", "idle"]
    assert [m["role"] for m in agent.derive_messages()] == ["user", "assistant"]
    chunks = events_of(agent, "assistant/chunk")
    msg = events_of(agent, "assistant/message")[0]
    usage_chunk = [c.data["chunk"] for c in chunks if c.data["chunk"]["type"] == "usage"][0]
    assert msg.data["usage"] == usage_chunk["usage"]
    assert msg.data["sourceEventSeqs"] == [c.seq for c in chunks]
    assert msg.data["message"]["content"] == [{"type": "text", "text": "abc"}]
    assert events_of(agent, "request/header")[0].data["reason"] == "initial"


async def test_s01_live_event_order(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    live = []
    for name in ("agent/inbox/inserted", "agent/status", "agent/inbox/claimed"):
        agent.subscribe(only(name, lambda p, name=name: live.append(name if name != "agent/status" else p["status"])))
    agent.followup("hi")
    await settle(agent)
    assert live == ["agent/inbox/inserted", "running", "agent/inbox/claimed", "idle"]


async def test_s02_synchronous_open(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    claimed = []
    agent.subscribe(only("agent/inbox/claimed", lambda p: claimed.append((p["message"]["id"], p["turn"]))))
    m = agent.followup("hi")
    # no await yet
    assert agent.status == "running"
    assert [e.data for e in events_of(agent, "turn/start")] == [{"turn": 1}]
    splices = events_of(agent, "agent/inbox/spliced")
    assert splices[1].data == {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []}
    assert claimed == [(m["id"], 1)]
    await settle(agent)


async def test_s03_burst_one_turn_per_message(tmp_path):
    agent = make_agent(tmp_path, [{"text": "a"}, {"text": "b"}, {"text": "c"}])
    seen = statuses(agent)
    agent.followup("one")
    agent.followup("two")
    agent.followup("three")
    await settle(agent)
    assert [e.data["turn"] for e in events_of(agent, "turn/start")] == [1, 2, 3]
    per_turn = {}
    for e in events_of(agent, "user/message"):
        per_turn.setdefault(e.data["turn"], []).append(e.data["message"]["content"][0]["text"])
    assert per_turn == {1: ["one"], 2: ["two"], 3: ["three"]}
    assert seen == ["running", "idle"]
    assert turn_ends(agent) == ["completed"] * 3


async def test_s04_idle_inject_waits(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    seen = statuses(agent)
    agent.inject("ctx")
    assert types_of(agent) == ["agent/inbox/spliced"]
    assert events_of(agent, "agent/inbox/spliced")[0].data["target"] == "next-step"
    assert agent.status == "idle" and seen == []
    await asyncio.sleep(0.01)
    assert types_of(agent) == ["agent/inbox/spliced"]
    agent.followup("go")
    await settle(agent)
    texts = request_texts(agent.provider.requests[0])
    assert texts == ["ctx", "go"]


async def test_s05_idle_steer_starts_turn_second_steer_joins_next_step(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])
    agent.steer("A")
    agent.steer("B")
    await settle(agent)
    assert len(events_of(agent, "turn/start")) == 1
    assert len(events_of(agent, "step/start")) == 2
    r1, r2 = (request_texts(r) for r in agent.provider.requests)
    assert "A" in r1 and "B" not in r1
    assert "B" in r2
    # The log says how each message was sent, for clients to show steering as such.
    assert [e.data["message"].get("delivery") for e in events_of(agent, "user/message")] == ["steer", "steer"]


async def test_s06_steering_mid_tool(tmp_path):
    async def slow(args, ctx):
        await asyncio.sleep(0.01)
        ctx.steer("change")
        await asyncio.sleep(0.01)
        return "slow done"

    agent = make_agent(tmp_path, [{"tools": [{"name": "slow", "arguments": {}}]}, {"text": "ok"}],
                       tools=[FnTool("slow", slow)])
    agent.followup("go")
    await settle(agent)
    steps = events_of(agent, "step/start")
    steer_msg = [e for e in events_of(agent, "user/message") if e.data["message"]["content"][0]["text"] == "change"]
    assert len(steps) == 2 and len(steer_msg) == 1
    assert steer_msg[0].seq > steps[1].seq
    assert "change" in request_texts(agent.provider.requests[1])
    assert len(events_of(agent, "turn/start")) == 1


async def test_s07_inject_deferred_past_tool_results(tmp_path):
    during = []

    async def body(args, ctx):
        ctx.inject("a")
        ctx.inject("b")
        during.append([e for e in ctx._agent.session.events if e.type == "user/message" and e.data["message"]["source"] == "tool"])
        return "done"

    agent = make_agent(tmp_path, [{"tools": [{"name": "t", "arguments": {}}]}, {"text": "ok"}], tools=[FnTool("t", body)])
    agent.followup("go")
    await settle(agent)
    assert during == [[]]
    result = events_of(agent, "tool/result")[0]
    injected = [e for e in events_of(agent, "user/message") if e.data["message"]["source"] == "tool"]
    assert [e.data["message"]["content"][0]["text"] for e in injected] == ["a", "b"]
    assert all(e.seq > result.seq for e in injected)
    roles = [m["role"] for m in agent.provider.requests[1].messages]
    texts = request_texts(agent.provider.requests[1])
    assert roles == ["user", "assistant", "tool", "user", "user"]
    assert texts[-2:] == ["a", "b"]


async def test_s08_turn_stopping_continuation(tmp_path):
    agent = make_agent(tmp_path, [{"text": "1"}, {"text": "2"}, {"text": "3"}])

    def stopping(p):
        if len(events_of(agent, "step/start")) < 3:
            agent.steer("continue")

    agent.hooks.serial("agent/turn-stopping", stopping)
    agent.followup("go")
    await settle(agent)
    assert len(events_of(agent, "step/start")) == 3
    assert len(agent.provider.requests) == 3
    assert len(events_of(agent, "turn/start")) == 1
    assert turn_ends(agent) == ["completed"]


async def test_s09_concludes_turn(tmp_path):
    async def echo(args, ctx):
        ctx.conclude_turn()
        return "echoed"

    agent = make_agent(tmp_path, [{"tools": [{"name": "echo", "arguments": {}}]}, {"text": "never"}],
                       tools=[FnTool("echo", echo)])
    agent.followup("go")
    await settle(agent)
    assert len(agent.provider.requests) == 1
    assert len(events_of(agent, "tool/result")) == 1
    assert turn_ends(agent) == ["completed"]


async def test_s09_concludes_turn_with_steer_continues(tmp_path):
    async def echo(args, ctx):
        ctx.steer("also this")
        ctx.conclude_turn()
        return "echoed"

    agent = make_agent(tmp_path, [{"tools": [{"name": "echo", "arguments": {}}]}, {"text": "ok"}],
                       tools=[FnTool("echo", echo)])
    agent.followup("go")
    await settle(agent)
    assert len(agent.provider.requests) == 2
    assert len(events_of(agent, "turn/start")) == 1
    assert "also this" in request_texts(agent.provider.requests[1])


async def test_s10_pre_step_reject(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}, {"text": "ok2"}])
    reject = {"on": True}

    async def pre_step(p, next_):
        if reject["on"]:
            return {"kind": "reject", "reason": "no"}
        return await next_()

    agent.hooks.waterfall("agent/pre-step", pre_step)
    agent.followup("first")
    agent.followup("second")
    await settle(agent)
    assert [t for t in types_of(agent) if t != "agent/inbox/spliced"] == ["turn/start", "turn/end"]
    assert events_of(agent, "turn/end")[0].data["reason"]["kind"] == "blocked"
    assert agent.provider.requests == []
    assert [m["content"][0]["text"] for m in agent.inbox.next_turn] == ["second"]
    await asyncio.sleep(0.01)
    assert len(events_of(agent, "turn/start")) == 1  # parked
    reject["on"] = False
    agent.followup("third")
    await settle(agent)
    texts = [e.data["message"]["content"][0]["text"] for e in events_of(agent, "user/message")]
    assert texts == ["second", "third"]


async def test_s11_pre_step_rewrite(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])

    async def pre_step(p, next_):
        decision = await next_()
        rewritten = [{**m, "content": [{"type": "text", "text": "REWRITTEN"}]} for m in decision["messages"]]
        return {"kind": "enter", "messages": rewritten}

    agent.hooks.waterfall("agent/pre-step", pre_step)
    agent.followup("original")
    await settle(agent)
    assert events_of(agent, "user/message")[0].data["message"]["content"][0]["text"] == "REWRITTEN"
    assert request_texts(agent.provider.requests[0]) == ["REWRITTEN"]


async def test_s11_pre_step_empty(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    agent.hooks.waterfall("agent/pre-step", lambda p, n: {"kind": "enter", "messages": []})
    agent.followup("x")
    await settle(agent)
    assert [t for t in types_of(agent) if t != "agent/inbox/spliced"] == ["turn/start", "turn/end"]
    assert turn_ends(agent) == ["completed"]
    assert agent.provider.requests == []


async def test_s12_pre_step_throws(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    seen = statuses(agent)
    errors = []
    agent.subscribe(only("agent/error", errors.append))
    boom = {"on": True}

    def pre_step(p, next_):
        if boom["on"]:
            raise RuntimeError("pre-step exploded")
        return next_()

    agent.hooks.waterfall("agent/pre-step", pre_step)
    agent.followup("first")
    agent.followup("queued")
    await settle(agent)
    end = events_of(agent, "turn/end")[0].data["reason"]
    assert end["kind"] == "error" and end["error"]["code"] == "UNKNOWN"
    assert "pre-step exploded" in end["error"]["message"]
    assert len(errors) == 1
    assert agent.provider.requests == []
    assert [m["content"][0]["text"] for m in agent.inbox.next_turn] == ["queued"]
    assert seen == ["running", "idle"]
    boom["on"] = False
    agent.followup("next")
    await settle(agent)
    assert turn_ends(agent)[-2:] == ["completed", "completed"]


async def test_s13_staging_during_pre_step(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])
    gate = asyncio.Event()
    calls = {"n": 0}

    async def pre_step(p, next_):
        calls["n"] += 1
        if calls["n"] == 1:
            await gate.wait()
        return await next_()

    agent.hooks.waterfall("agent/pre-step", pre_step)
    agent.followup("go")
    await asyncio.sleep(0.01)
    agent.inject("C")
    agent.steer("S")
    gate.set()
    await settle(agent)
    r1, r2 = (request_texts(r) for r in agent.provider.requests)
    assert "C" not in r1 and "S" not in r1
    step2 = [e.data["message"]["content"][0]["text"] for e in events_of(agent, "user/message") if e.data["step"] == 2]
    assert step2 == ["C", "S"]
    assert r2[-2:] == ["C", "S"]


async def test_s13_staging_then_reject_keeps_next_step(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}])
    gate = asyncio.Event()

    async def pre_step(p, next_):
        await gate.wait()
        return {"kind": "reject"}

    agent.hooks.waterfall("agent/pre-step", pre_step)
    agent.followup("go")
    await asyncio.sleep(0.01)
    agent.inject("C")
    agent.steer("S")
    gate.set()
    await settle(agent)
    assert turn_ends(agent) == ["blocked"]
    assert [m["content"][0]["text"] for m in agent.inbox.next_step] == ["C", "S"]


async def test_runtime_context_entered_only_when_changed(tmp_path):
    state = {"ctx": "open: a.py"}
    agent = make_agent(tmp_path, [{"text": "1"}, {"text": "2"}, {"text": "3"}], runtime_context=lambda: state["ctx"])
    agent.followup("one")
    await settle(agent)
    agent.followup("two")
    await settle(agent)
    state["ctx"] = "open: b.py"
    agent.followup("three")
    await settle(agent)
    sources = [(e.data["turn"], e.data["message"]["source"]) for e in events_of(agent, "user/message")]
    assert sources == [(1, "user"), (1, "runtime-context"), (2, "user"), (3, "user"), (3, "runtime-context")]
    assert request_texts(agent.provider.requests[2])[-2:] == ["three", "open: b.py"]


async def test_send_rejects_non_json_content_and_duplicate_pending_ids(tmp_path):
    import pytest

    agent = make_agent(tmp_path, [{"text": "ok"}])
    with pytest.raises(ValueError):
        agent.inject([{"type": "text", "text": "x", "bad": {1, 2}}])
    agent.inject("a", id="same")
    with pytest.raises(ValueError):
        agent.followup("b", id="same")
    assert types_of(agent) == ["agent/inbox/spliced"]
    assert agent.remove("nope") is False
    assert agent.remove("same") is True
    spliced = events_of(agent, "agent/inbox/spliced")
    assert spliced[-1].data == {"target": "next-step", "start": 0, "removedCount": 1, "inserted": [], "outcome": "canceled"}


async def test_followup_context_reaches_the_model(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    m = agent.followup("explain", context=[{"type": "selection", "path": "a.py", "text": "x = 1"}])
    await settle(agent)
    assert m["context"] == [{"type": "selection", "path": "a.py", "text": "x = 1"}]
    text = request_texts(agent.provider.requests[0])[0]
    assert text.startswith("explain") and "a.py" in text and "x = 1" in text
