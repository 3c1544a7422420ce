"""Gaps found in an audit of the loop (rules R2.13, R8 lifecycle events, R11.5 fork,
the fallback model); each test is named after the rule it pins."""

from agent_lsp.agent.events import only
from agent_lsp.agent import Agent, AgentOptions, RetryOptions, account_work
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore

from agent_helpers import events_of, make_agent, settle, turn_ends

FAST = RetryOptions(base_delay_s=0.001, max_delay_s=0.01)


def recorder(*names):
    """A subscriber recording (type, data) of the live events named."""
    seen = []
    return seen, [lambda e: seen.append((e.type, e.data)) if e.type in names else None]


LIFECYCLE = ("agent/created", "agent/session-start", "agent/disposed", "agent/status")


# --------------------------------------------------------- R8 lifecycle events


async def test_r8_created_and_session_start_startup_then_disposed(tmp_path):
    store = SessionStore(tmp_path)
    session = store.create()
    seen, listeners = recorder(*LIFECYCLE)
    agent = Agent(session, providers={"scripted": ScriptedProvider([{"text": "ok"}])},
                  options=AgentOptions(provider="scripted", model="m"), subscribers=listeners)
    assert seen == [("agent/created", {"agentId": session.id, "sessionId": session.id}),
                    ("agent/session-start", {"source": "startup", "sessionId": session.id})]
    agent.followup("hi")
    await settle(agent)
    await agent.dispose()
    assert [n for n, _ in seen] == ["agent/created", "agent/session-start", "agent/status", "agent/status",
                                    "agent/disposed"]
    assert seen[-1][1] == {"agentId": session.id, "sessionId": session.id}


async def test_r11_4_session_start_resume_after_load(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    agent.followup("hi")
    await settle(agent)
    await agent.dispose()
    session = SessionStore(tmp_path / "sessions").load(agent.session_id)
    seen, listeners = recorder(*LIFECYCLE)
    Agent(session, providers={"scripted": ScriptedProvider()}, options=AgentOptions(provider="scripted", model="m"),
          subscribers=listeners)
    assert seen[1] == ("agent/session-start", {"source": "resume", "sessionId": session.id})
    assert [n for n, _ in seen] == ["agent/created", "agent/session-start"]  # resume starts idle (R11.4)


async def test_r8_session_start_source_override_and_subscriber_lists(tmp_path):
    session = SessionStore(tmp_path).create()
    a, b = [], []
    Agent(session, providers={}, options=AgentOptions(provider="x", model="y"), start_source="clear",
          subscribers=[only("agent/session-start", a.append), only("agent/session-start", b.append)])
    assert a == b == [{"source": "clear", "sessionId": session.id}]


async def test_r8_session_start_compact_after_manual_compaction(tmp_path):
    agent = make_agent(tmp_path, [{"text": "answer " * 40}, {"text": "a short summary"}])
    agent.followup("question " * 60)
    await settle(agent)
    seen = []
    agent.subscribe(only("agent/session-start", seen.append))
    result = await agent.compact_now()
    assert result is not None
    assert seen == [{"source": "compact", "sessionId": agent.session_id, "compactionId": result["compactionId"]}]


# ------------------------------------------------- R2.13 consumed-work accounting


async def test_r2_13_turn_that_entered_a_step_consumed_its_input(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    agent.followup("go")
    await settle(agent)
    account = agent.consumed_work()
    assert account.consumed and account.consumed_turns == (1,) and account.last_consumed_turn == 1
    assert not account.dropped_unrun
    assert account.last_consumed_seq == events_of(agent, "turn/end")[0].seq


async def test_r2_13_claimed_then_aborted_consumes_but_completed_without_step_does_not(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    agent.followup("lost")
    agent.cancel(keep_inbox=True)  # claimed synchronously, then a zero-step aborted turn
    await settle(agent)
    assert turn_ends(agent) == ["aborted"]
    assert agent.consumed_work().consumed_turns == (1,)

    empty = make_agent(tmp_path / "b", [{"text": "ok"}])
    empty.hooks.register("agent/pre-step", lambda p, next_: {"kind": "enter", "messages": []})
    empty.followup("rewritten away")
    await settle(empty)
    assert turn_ends(empty) == ["completed"]
    assert not empty.consumed_work().consumed  # completed, claimed, no step: not accounted


async def test_r2_13_blocked_turn_consumed_its_claim(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    agent.hooks.register("agent/pre-step", lambda p, next_: {"kind": "reject"})
    agent.followup("denied")
    await settle(agent)
    assert turn_ends(agent) == ["blocked"] and agent.consumed_work().consumed_turns == (1,)


async def test_r2_13_cancel_splice_after_last_accounting_turn_is_dropped_work(tmp_path):
    agent = make_agent(tmp_path, [{"text": "first"}, {"hang": "x"}])
    agent.followup("one")
    await settle(agent)
    start = len(agent.session.events)
    agent.inject("queued context")  # waits in next-step, no wake
    agent.cancel()  # clears the inbox durably: the context is dropped unrun
    whole = agent.consumed_work()
    assert whole.consumed_turns == (1,) and whole.dropped_unrun
    since = agent.consumed_work(start=start)  # from the hand-over point: nothing consumed, work dropped
    assert not since.consumed and since.dropped_unrun
    agent.followup("two")  # a later accounting turn supersedes the drop
    await until_running_then_cancel(agent)
    after = account_work(agent.session.events)
    assert after.consumed_turns == (1, 2) and not after.dropped_unrun


async def until_running_then_cancel(agent):
    import asyncio

    while not events_of(agent, "assistant/chunk")[1:]:
        await asyncio.sleep(0.001)
    agent.cancel()
    await settle(agent)


# ------------------------------------------------ fallback model


async def test_i7_overloaded_falls_back_after_the_transient_budget(tmp_path):
    backup = ScriptedProvider([{"text": "from backup"}], name="backup")
    agent = make_agent(tmp_path, [{"fail": "OVERLOADED"}] * 3, fallback_provider="backup", fallback_model="b1",
                       retry=RetryOptions(base_delay_s=0.001, max_delay_s=0.01, max_retries=2))
    agent.providers["backup"] = backup
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["completed"]
    assert [r.data["retry"] for r in events_of(agent, "llm/retry")] == [1, 2]  # the primary's budget first
    fallback = events_of(agent, "llm/fallback")
    assert len(fallback) == 1 and fallback[0].data["failure"]["code"] == "OVERLOADED"
    assert fallback[0].data["from"] == {"provider": "scripted", "model": "m1"}
    assert fallback[0].data["to"] == {"provider": "backup", "model": "b1"}
    assert len(events_of(agent, "step/start")) == 1  # same step
    assert [h.data["reason"] for h in events_of(agent, "request/header")] == ["initial", "change"]


async def test_i7_fallback_gets_its_own_transient_budget_and_is_used_once(tmp_path):
    backup = ScriptedProvider([{"fail": "RATE_LIMIT"}, {"text": "ok"}, {"text": "again"}], name="backup")
    agent = make_agent(tmp_path, [{"fail": "MODEL_UNAVAILABLE"}], fallback_provider="backup",
                       retry=RetryOptions(base_delay_s=0.001, max_delay_s=0.01, max_retries=1))
    agent.providers["backup"] = backup
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["completed"]
    assert [r.data["provider"] for r in events_of(agent, "llm/retry")] == ["backup"]
    agent.followup("next turn")  # the switch is sticky: no second fallback, no primary call
    await settle(agent)
    assert turn_ends(agent) == ["completed", "completed"]
    assert len(agent.provider.requests) == 1 and len(backup.requests) == 3


async def test_i7_no_fallback_when_not_configured_overloaded_is_terminal(tmp_path):
    agent = make_agent(tmp_path, [{"fail": "OVERLOADED"}] * 3,
                       retry=RetryOptions(base_delay_s=0.001, max_delay_s=0.01, max_retries=1))
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["error"]
    assert events_of(agent, "turn/end")[0].data["reason"]["error"]["code"] == "OVERLOADED"
    assert not events_of(agent, "llm/fallback")


# ------------------------------------------------------------ inbox and status


async def test_r2_4_splice_observer_sees_the_lists_before_the_splice(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    seen = []

    def observe(event):
        if event.type == "agent/inbox/spliced":
            seen.append((event.data.get("removedCount", 0), len(event.data["inserted"]),
                         len(agent.inbox.next_turn), len(agent.inbox.next_step)))

    agent.session.subscribe(observe)
    agent.inject("ctx")
    agent.followup("go")
    await settle(agent)
    # insert ctx (lists empty), insert go (ctx pending), claim next-step (ctx, go), claim next-turn (go)
    assert seen == [(0, 1, 0, 0), (0, 1, 0, 1), (1, 0, 1, 1), (1, 0, 1, 0)]


async def test_r2_5_claim_is_a_pure_deletion_without_discarded(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    live = []
    for name in ("agent/inbox/inserted", "agent/inbox/discarded", "agent/inbox/claimed"):
        agent.subscribe(only(name, lambda p, name=name: live.append(name)))
    agent.followup("go")
    await settle(agent)
    claim = events_of(agent, "agent/inbox/spliced")[1].data
    assert claim == {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []}
    assert live == ["agent/inbox/inserted", "agent/inbox/claimed"]


async def test_r3_6_maintenance_fails_synchronously_unless_idle_and_cancel_aborts_it(tmp_path):
    import asyncio

    import pytest

    from agent_lsp.agent import AgentBusyError, CompactionError

    agent = make_agent(tmp_path, [{"hang": "x"}])
    agent.followup("go")
    with pytest.raises(CompactionError) as info:
        agent.compact_now()  # raises at the call, before any await
    assert info.value.kind == "busy"
    agent.cancel()
    await settle(agent)

    started = asyncio.Event()
    seen = []
    agent.subscribe(only("agent/status", lambda p: seen.append(p["status"])))

    async def task(signal):
        started.set()
        await signal.wait()
        return signal.reason

    running = agent.run_maintenance(task)
    with pytest.raises(AgentBusyError):
        agent.run_maintenance(task)
    await started.wait()
    agent.cancel("parent")
    assert await running == {"kind": "parent"}
    assert seen == [] and agent.status == "idle"  # maintenance reports idle throughout


async def test_r4_7_agent_error_comes_before_the_durable_turn_end(tmp_path):
    agent = make_agent(tmp_path, [{"fail": "AUTH"}])
    order = []
    agent.session.subscribe(lambda e: order.append(e.type) if e.type == "turn/end" else None)
    agent.subscribe(only("agent/error", lambda p: order.append(("agent/error", p["turn"], p["step"], p["error"]["code"]))))
    agent.followup("go")
    await settle(agent)
    assert order == [("agent/error", 1, 1, "AUTH"), "turn/end"]


# ------------------------------------------------------------- R8 llm/stream


async def test_r8_llm_stream_middleware_wraps_the_stream_and_chunks_are_logged(tmp_path):
    agent = make_agent(tmp_path, [{"text": "abc"}])
    seen = []

    async def upper(p, next_):
        seen.append((p["provider"], p["turn"], p["step"], p["request"].model))
        inner = await next_()

        async def wrapped():
            async for chunk in inner:
                if chunk["type"] == "text-delta":
                    chunk = {**chunk, "text": chunk["text"].upper()}
                yield chunk

        return wrapped()

    agent.hooks.register("llm/stream", upper)
    agent.followup("go")
    await settle(agent)
    assert seen == [("scripted", 1, 1, "m1")]
    message = events_of(agent, "assistant/message")[0].data
    assert message["message"]["content"] == [{"type": "text", "text": "ABC"}]
    deltas = [e.data["chunk"]["text"] for e in events_of(agent, "assistant/chunk") if e.data["chunk"]["type"] == "text-delta"]
    assert deltas == ["A", "B", "C"]  # model-visible means logged


async def test_r8_llm_stream_middleware_failure_is_a_turn_error_not_retried(tmp_path):
    from agent_lsp.llm.types import LlmError

    agent = make_agent(tmp_path, [{"text": "never"}], retry=FAST)
    offered = []
    agent.hooks.register("agent/request-error", lambda p, next_: offered.append(p) or next_(), first=True)

    def broken(p, next_):
        raise LlmError({"code": "RATE_LIMIT", "message": "middleware says no"})

    agent.hooks.register("llm/stream", broken)
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["error"] and offered == [] and agent.provider.requests == []
    assert events_of(agent, "turn/end")[0].data["reason"]["error"]["code"] == "RATE_LIMIT"
    assert not events_of(agent, "llm/retry")


async def test_r3_2_a_send_from_an_idle_listener_never_shows_a_repeat_to_other_listeners(tmp_path):
    agent = make_agent(tmp_path, [{"text": "a"}, {"text": "b"}])
    first, second = [], []

    def resend(p):
        first.append(p["status"])
        if p["status"] == "idle" and len(first) == 2:
            agent.followup("again")

    agent.subscribe(only("agent/status", resend))
    agent.subscribe(only("agent/status", lambda p: second.append(p["status"])))
    agent.followup("go")
    await settle(agent)
    assert first == second == ["running", "idle", "running", "idle"]
    assert turn_ends(agent) == ["completed", "completed"]


async def test_r11_2_inbox_changes_while_idle_are_written_at_once(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    path = agent.store.path_of(agent.session_id)

    def on_disk():
        return len(path.read_text().splitlines()) - 1  # minus the header

    kept = agent.inject("keep me")
    assert on_disk() == len(agent.session.events) == 1
    dropped = agent.inject("drop me")
    agent.remove(dropped["id"])
    assert on_disk() == len(agent.session.events) == 3
    agent.cancel(keep_inbox=True)  # nothing to abort or clear: writes nothing
    assert on_disk() == len(agent.session.events) == 3
    # a crash now (no dispose): a fresh process still has the queued context
    resumed = SessionStore(tmp_path / "sessions").load(agent.session_id)
    again = Agent(resumed, providers={}, options=AgentOptions(provider="x", model="y"))
    assert [m["id"] for m in again.inbox.next_step] == [kept["id"]]
    again.cancel()  # clearing while idle is written at once too
    assert on_disk() == len(resumed.events) == 5


def test_r2_13_fold_over_a_hand_built_log():
    from agent_lsp.store.session import Event

    def log(*entries):
        return [Event(i, 0, t, d) for i, (t, d) in enumerate(entries)]

    insert = ("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [{"id": "m"}]})
    claim = ("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})
    cancel = ("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": [],
                                      "outcome": "canceled"})

    def turn(n, kind, *, claimed=True, stepped=False):
        body = [claim] if claimed else []
        if stepped:
            body += [("step/start", {"turn": n, "step": 1}), ("step/end", {"turn": n, "step": 1})]
        return [("turn/start", {"turn": n}), *body, ("turn/end", {"turn": n, "reason": {"kind": kind}})]

    for kind in ("blocked", "aborted", "interrupted", "error"):
        assert account_work(log(insert, *turn(1, kind))).consumed_turns == (1,), kind
    assert not account_work(log(insert, *turn(1, "completed"))).consumed
    assert not account_work(log(*turn(1, "aborted", claimed=False))).consumed  # nothing claimed
    assert account_work(log(insert, *turn(1, "completed", stepped=True))).consumed_turns == (1,)
    dropped = account_work(log(insert, *turn(1, "completed", stepped=True), insert, cancel))
    assert dropped.consumed_turns == (1,) and dropped.dropped_unrun and dropped.last_consumed_seq == 5
    assert not account_work(log(insert, cancel, insert, *turn(1, "error"))).dropped_unrun


async def test_r7_3_cancel_during_agent_request_is_an_empty_balanced_step(tmp_path):
    from agent_helpers import types_of

    agent = make_agent(tmp_path, [{"text": "never"}])

    async def waiting(p, next_):
        agent.cancel()
        await p["signal"].wait()
        return await next_()

    agent.hooks.register("agent/request", waiting)
    agent.followup("go")
    await settle(agent)
    assert types_of(agent)[3:] == ["step/start", "user/message", "step/end", "turn/end"]
    assert turn_ends(agent) == ["aborted"] and agent.provider.requests == []
