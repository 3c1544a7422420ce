"""Property tests (hypothesis) for the session log's invariants (docs/agent-loop.md)."""

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_lsp.agent.events import only
from agent_lsp.agent import Agent, AgentOptions, RetryOptions, ToolRegistry
from agent_lsp.agent.invariants import log_violations
from agent_lsp.agent.ports import ToolOutput
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore

from agent_helpers import FnTool

call_st = st.fixed_dictionaries({
    "yields": st.integers(0, 6),  # how many times the body yields: settlement order varies
    "parallel": st.booleans(),
    "fails": st.booleans(),
})
reply_st = st.one_of(
    st.fixed_dictionaries({"kind": st.just("text"), "text": st.text(min_size=0, max_size=5)}),
    st.fixed_dictionaries({"kind": st.just("tools"), "calls": st.lists(call_st, min_size=1, max_size=5)}),
    st.fixed_dictionaries({"kind": st.just("maxTokens")}),
    st.fixed_dictionaries({"kind": st.just("fail"), "code": st.sampled_from(["RATE_LIMIT", "AUTH"])}),
)
scenario_st = st.fixed_dictionaries({
    "replies": st.lists(reply_st, min_size=1, max_size=6),
    "prompts": st.integers(1, 3),
    "cancel_after": st.one_of(st.none(), st.integers(3, 60)),  # cancel when the log reaches this length
    "cap": st.integers(1, 4),
})


def build_script(replies, plan):
    script = []
    n = 0
    for r in replies:
        if r["kind"] == "text":
            script.append({"text": r["text"]})
        elif r["kind"] == "maxTokens":
            script.append({"maxTokens": "cut"})
        elif r["kind"] == "fail":
            script.append({"fail": r["code"]})
        else:
            tools = []
            for c in r["calls"]:
                n += 1
                call_id = f"c{n}"
                plan[call_id] = c
                tools.append({"name": "par" if c["parallel"] else "excl", "arguments": {}, "id": call_id})
            script.append({"tools": tools})
    return script


async def body(args, ctx):
    c = PLAN[ctx.call_id]
    for _ in range(c["yields"]):
        await asyncio.sleep(0)
    if c["fails"]:
        raise RuntimeError("tool failed")
    return ToolOutput(content=f"{ctx.call_id} ok")


PLAN: dict = {}


async def run_scenario(directory: Path, scenario):
    PLAN.clear()
    script = build_script(scenario["replies"], PLAN)
    store = SessionStore(directory)
    session = store.create()
    agent = Agent(session, providers={"scripted": ScriptedProvider(script)},
                  tools=ToolRegistry([FnTool("par", body, parallel=True), FnTool("excl", body)]),
                  options=AgentOptions(provider="scripted", model="m", max_parallel_tool_calls=scenario["cap"],
                                       retry=RetryOptions(base_delay_s=0, max_delay_s=0, jitter=0)))
    statuses = []
    agent.subscribe(only("agent/status", lambda p: statuses.append(p["status"])))
    if scenario["cancel_after"] is not None:
        limit = scenario["cancel_after"]
        session.subscribe(lambda e: agent.cancel() if e.seq == limit else None)
    for i in range(scenario["prompts"]):
        agent.followup(f"prompt {i}")
    await asyncio.wait_for(agent.when_idle(), 10)
    live = agent.derive_messages()
    await agent.dispose()
    return agent, statuses, live, store, session.id


def check_invariants(events):
    assert log_violations(events) == []
    calls = [e.data["callId"] for e in events if e.type == "tool/call"]
    results = [e.data["callId"] for e in events if e.type == "tool/result" and e.data["surfaceOp"] == "append"]
    assert results == calls and len(set(calls)) == len(calls)  # exactly one result per call, in model order


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(scenario_st)
def test_property_log_invariants_and_replay(scenario):
    with tempfile.TemporaryDirectory() as tmp:
        agent, statuses, live, store, sid = asyncio.run(run_scenario(Path(tmp), scenario))
        check_invariants(agent.session.events)
        assert all(a != b for a, b in zip(statuses, statuses[1:]))  # status never repeats
        assert statuses[0] == "running" and statuses[-1] == "idle"
        reloaded = SessionStore(Path(tmp)).load(sid)
        check_invariants(reloaded.events)
        from agent_lsp.agent.history import derive_messages

        assert derive_messages(reloaded) == live
        # R11.5: a fork at any turn boundary sees exactly the history up to it
        from agent_lsp.store import Session

        fresh = SessionStore(Path(tmp))
        for end in [e.seq for e in reloaded.events if e.type == "turn/end"]:
            child = fresh.fork(sid, end)
            assert derive_messages(child) == derive_messages(Session("prefix", reloaded.events[: end + 1]))
            check_invariants(child.events)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 8), min_size=2, max_size=6), st.integers(1, 6))
def test_property_results_in_model_order_whatever_settlement(yields, cap):
    async def go():
        PLAN.clear()
        tools = []
        for i, y in enumerate(yields):
            PLAN[f"k{i}"] = {"yields": y, "parallel": True, "fails": False}
            tools.append({"name": "par", "arguments": {}, "id": f"k{i}"})
        with tempfile.TemporaryDirectory() as tmp:
            session = SessionStore(Path(tmp)).create()
            agent = Agent(session, providers={"scripted": ScriptedProvider([{"tools": tools}, {"text": "ok"}])},
                          tools=ToolRegistry([FnTool("par", body, parallel=True)]),
                          options=AgentOptions(provider="scripted", model="m", max_parallel_tool_calls=cap))
            agent.followup("go")
            await asyncio.wait_for(agent.when_idle(), 10)
            return [e.data["callId"] for e in session.events if e.type == "tool/result"]

    assert asyncio.run(go()) == [f"k{i}" for i in range(len(yields))]


op_st = st.lists(st.tuples(st.sampled_from(["followup", "steer", "inject", "remove", "cancel", "cancel-keep"]),
                           st.integers(0, 5)), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(op_st)
def test_property_inbox_rebuilt_from_splices_equals_live(ops):
    from agent_lsp.agent.inbox import Inbox

    async def go():
        with tempfile.TemporaryDirectory() as tmp:
            session = SessionStore(Path(tmp)).create()
            agent = Agent(session, providers={"scripted": ScriptedProvider([{"hang": "x"}] * 3)},
                          options=AgentOptions(provider="scripted", model="m"))
            ids = []
            for op, n in ops:
                if op in ("followup", "steer", "inject"):
                    ids.append(getattr(agent, op)(f"{op} {n}")["id"])
                elif op == "remove" and ids:
                    agent.remove(ids[n % len(ids)])
                elif op == "cancel":
                    agent.cancel()
                elif op == "cancel-keep":
                    agent.cancel(keep_inbox=True)
                await asyncio.sleep(0)
            for _ in range(4):  # latched replays may start hanging turns (3 hang replies at most)
                agent.cancel(keep_inbox=True)
                await asyncio.sleep(0.005)
            await asyncio.wait_for(agent.when_idle(), 5)
            rebuilt = Inbox(session, lambda *a: None)
            rebuilt.rebuild(session.events)
            assert rebuilt.next_turn == agent.inbox.next_turn
            assert rebuilt.next_step == agent.inbox.next_step
            assert log_violations(session.events) == []

    asyncio.run(go())
