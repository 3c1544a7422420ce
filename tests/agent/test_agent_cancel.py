"""Cancellation cases and the grace-abandon rule (docs/agent-loop.md)."""

import asyncio

import pytest

from agent_lsp.agent.events import only
from agent_lsp.agent.ports import ToolOutput

from agent_helpers import FnTool, events_of, make_agent, request_texts, settle, statuses, turn_ends, types_of, until


def user_texts(agent):
    return [e.data["message"]["content"][0]["text"] for e in events_of(agent, "user/message")]


async def test_c01_cancel_on_idle_empty_agent_is_noop(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    agent.cancel()
    assert agent.session.events == []
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["completed"]


async def test_c03_keep_inbox_parks_queued_work(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}, {"text": "q"}, {"text": "n"}])
    agent.followup("A")
    agent.followup("queued")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.cancel(keep_inbox=True)
    await settle(agent)
    assert turn_ends(agent) == ["aborted"]
    assert [m["content"][0]["text"] for m in agent.inbox.next_turn] == ["queued"]
    agent.followup("new")
    await settle(agent)
    assert user_texts(agent) == ["A", "queued", "new"]
    assert turn_ends(agent) == ["aborted", "completed", "completed"]


async def test_c07_latch_deep_into_slow_abort_convergence(tmp_path):
    stopping = asyncio.Event()

    async def slow_to_stop(args, ctx):
        await ctx.signal.wait()
        stopping.set()
        await asyncio.sleep(0.05)  # takes 50 ms to wind down
        return "stopped"

    agent = make_agent(tmp_path, [{"tools": [{"name": "slow", "arguments": {}}]}, {"text": "B"}],
                       tools=[FnTool("slow", slow_to_stop)])
    agent.followup("A")
    await until(lambda: bool(events_of(agent, "tool/call")))
    agent.cancel(keep_inbox=True)
    await asyncio.wait_for(stopping.wait(), 5)  # the tool is winding down
    agent.followup("B")
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed"]
    assert events_of(agent, "tool/result")[0].data["message"]["content"][0]["text"] == "stopped"


async def test_c08_no_latch_after_disposal_begins(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}, {"text": "never"}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    disposing = asyncio.ensure_future(agent.dispose())
    await asyncio.sleep(0)
    agent.followup("B")  # still accepted while disposing, but never run
    await disposing
    assert turn_ends(agent) == ["aborted"]
    assert len(agent.provider.requests) == 1
    with pytest.raises(RuntimeError):
        agent.followup("after")


async def test_c09_cancel_right_after_two_waking_sends(tmp_path):
    agent = make_agent(tmp_path, [{"text": "x"}])
    agent.followup("A")
    agent.followup("B")
    agent.cancel()
    await settle(agent)
    assert [t for t in types_of(agent) if t not in ("agent/inbox/spliced",)] == ["turn/start", "turn/end"]
    assert events_of(agent, "turn/end")[0].data["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
    assert agent.provider.requests == []
    assert agent.inbox.next_turn == []


async def test_c10_disposal_from_running_listener_drops_queued_work(tmp_path):
    agent = make_agent(tmp_path, [{"text": "x"}])
    tasks = []

    def on_status(p):
        if p["status"] == "running" and not tasks:
            tasks.append(asyncio.ensure_future(agent.dispose()))

    agent.subscribe(only("agent/status", on_status))
    agent.followup("A")
    await asyncio.wait_for(tasks[0], 2)
    assert events_of(agent, "turn/start") == []
    assert agent.provider.requests == []


async def test_c11_when_idle_before_pre_step_cancel_resolves(tmp_path):
    agent = make_agent(tmp_path, [{"text": "x"}])

    async def pre_step(p, next_):
        await p["signal"].wait()
        return await next_()

    agent.hooks.waterfall("agent/pre-step", pre_step)
    agent.followup("A")
    waiter = asyncio.ensure_future(agent.when_idle())
    await asyncio.sleep(0.01)
    agent.cancel()
    await asyncio.wait_for(waiter, 2)
    assert turn_ends(agent) == ["aborted"]


async def test_c12_c13_idle_listener_cancel_and_replacement(tmp_path):
    agent = make_agent(tmp_path, [{"text": "first"}, {"text": "replacement"}])
    fired = []

    def on_status(p):
        if p["status"] == "idle" and not fired:
            fired.append(True)
            agent.cancel()  # nothing active: a no-op for later work
            agent.followup("replacement")

    agent.subscribe(only("agent/status", on_status))
    agent.followup("A")
    await settle(agent)
    assert user_texts(agent) == ["A", "replacement"]
    assert turn_ends(agent) == ["completed", "completed"]


async def test_c14_cancel_mid_step_drops_queued_tail(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}, {"text": "tail"}])
    agent.followup("A")
    agent.followup("tail")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    discarded = []
    agent.subscribe(only("agent/inbox/discarded", lambda p: discarded.append(p["message"]["content"][0]["text"])))
    agent.cancel()
    await settle(agent)
    assert discarded == ["tail"]
    assert turn_ends(agent) == ["aborted"]
    canceled = [e for e in events_of(agent, "agent/inbox/spliced") if e.data.get("outcome") == "canceled"]
    assert len(canceled) == 1 and canceled[0].data["inserted"] == []


async def test_c16_prompt_after_cancelled_turn_runs_normally(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}, {"text": "ok"}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.cancel()
    await settle(agent)
    agent.followup("B")
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed"]


async def test_c20_cancel_during_retry_backoff_writes_no_started_event(tmp_path):
    from agent_lsp.agent import RetryOptions

    agent = make_agent(tmp_path, [{"fail": "RATE_LIMIT", "retryAfterMs": 5000}, {"text": "never"}],
                       retry=RetryOptions(max_delay_s=10))
    agent.followup("A")
    await until(lambda: bool(events_of(agent, "llm/retry")))
    agent.cancel()
    await settle(agent)
    assert events_of(agent, "llm/retry-started") == []
    assert events_of(agent, "assistant/message") == []
    assert turn_ends(agent) == ["aborted"]
    assert len(agent.provider.requests) == 1


async def test_c22_cancel_before_visible_content_finalises_nothing(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "   "}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 5)
    agent.cancel()
    await settle(agent)
    assert events_of(agent, "assistant/message") == []


async def test_c24_disposal_from_step_start_observer(tmp_path):
    agent = make_agent(tmp_path, [{"text": "x"}])
    tasks = []

    def observer(e):
        if e.type == "step/start":
            tasks.append(asyncio.ensure_future(agent.dispose()))

    agent.session.subscribe(observer)
    agent.followup("A")
    await until(lambda: bool(tasks))
    await asyncio.wait_for(tasks[0], 2)
    assert agent.provider.requests == []
    t = types_of(agent)
    assert t.count("step/start") == t.count("step/end") == 1


async def test_c27_running_listener_cancel_plus_replacement_runs_alone(tmp_path):
    agent = make_agent(tmp_path, [{"text": "r"}])
    seen = statuses(agent)
    done = []

    def on_status(p):
        if p["status"] == "running" and not done:
            done.append(True)
            agent.cancel()
            agent.followup("replacement")

    agent.subscribe(only("agent/status", on_status))
    agent.followup("original")
    await settle(agent)
    assert user_texts(agent) == ["replacement"]
    assert turn_ends(agent) == ["completed"]
    assert seen == ["running", "idle"]


async def test_c28_prompt_queued_during_pre_step_cancel_replays(tmp_path):
    agent = make_agent(tmp_path, [{"text": "b"}, {"text": "c"}])
    first = {"on": True}

    async def pre_step(p, next_):
        if first["on"]:
            first["on"] = False
            agent.cancel(keep_inbox=True)
            agent.followup("B")
            agent.followup("C")
        return await next_()

    agent.hooks.waterfall("agent/pre-step", pre_step)
    agent.followup("A")
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed", "completed"]
    assert user_texts(agent) == ["B", "C"]


async def test_c29_cancel_clears_steering(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}, {"text": "never"}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.steer("S")
    agent.cancel()
    await settle(agent)
    assert agent.inbox.next_step == [] and agent.inbox.next_turn == []
    await asyncio.sleep(0.01)
    assert turn_ends(agent) == ["aborted"]


async def test_c30_replacement_queued_by_abort_signal_observer_replays(tmp_path):
    tokens = []

    def reply(request):
        tokens.append(request.signal)
        request.signal.on_abort(lambda cause: agent.followup("replacement"))
        return {"hang": "x"}

    agent = make_agent(tmp_path, [reply, {"text": "ok"}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.cancel()
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed"]
    assert user_texts(agent) == ["A", "replacement"]


@pytest.mark.parametrize("point", ["pre-step", "system-prompt", "request", "stopping", "tool"])
async def test_cooperative_listeners_settle_aborted_user(tmp_path, point):
    async def waiting_tool(args, ctx):
        await ctx.signal.wait()
        return "stopped"

    script = [{"tools": [{"name": "w", "arguments": {}}]}] if point == "tool" else [{"text": "x"}]
    agent = make_agent(tmp_path, script, tools=[FnTool("w", waiting_tool)])
    reached = asyncio.Event()

    async def waterfall(p, next_):
        reached.set()
        await p["signal"].wait()
        return await next_()

    async def serial(p):
        reached.set()
        await p["signal"].wait()

    if point == "pre-step":
        agent.hooks.waterfall("agent/pre-step", waterfall)
    elif point == "system-prompt":
        agent.hooks.waterfall("system-prompt/assemble", waterfall)
    elif point == "request":
        agent.hooks.waterfall("agent/request", waterfall)
    elif point == "stopping":
        agent.hooks.serial("agent/turn-stopping", serial)
    else:
        agent.subscribe(only("agent/tool/progress", lambda p: None))
        agent.session.subscribe(lambda e: reached.set() if e.type == "tool/call" else None)
    agent.followup("go")
    await asyncio.wait_for(reached.wait(), 2)
    agent.cancel()
    await settle(agent)
    assert events_of(agent, "turn/end")[0].data["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
    assert agent.status == "idle"


async def test_cancel_abandons_a_tool_that_ignores_cancellation(tmp_path):
    release = asyncio.Event()

    async def stubborn(args, ctx):
        while not release.is_set():
            try:
                await asyncio.shield(release.wait())
            except asyncio.CancelledError:
                continue  # ignores cancellation entirely
        return "late"

    agent = make_agent(tmp_path, [{"tools": [{"name": "s", "arguments": {}}]}, {"text": "next"}],
                       tools=[FnTool("s", stubborn)], cancel_grace_s=0.05)
    seen = statuses(agent)
    agent.followup("go")
    await until(lambda: bool(events_of(agent, "tool/call")))
    agent.cancel()
    await settle(agent, timeout=2)
    result = events_of(agent, "tool/result")[0].data
    assert result["error"]["code"] == "TOOL_ABANDONED" and result["abandoned"] is True
    assert turn_ends(agent) == ["aborted"]
    assert seen == ["running", "idle"]
    # the session is not wedged
    agent.followup("again")
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed"]
    release.set()
    await asyncio.sleep(0.01)
    assert len(events_of(agent, "tool/result")) == 1  # the late result is never recorded


async def test_stream_that_ignores_cancellation_is_abandoned(tmp_path):
    stop = asyncio.Event()

    class Stubborn:
        name = "scripted"
        requests = []

        def model_info(self, model):
            from agent_lsp.llm.types import ModelInfo
            return ModelInfo(context_window=None)

        async def stream(self, request):
            yield {"type": "text-start"}
            yield {"type": "text-delta", "text": "hi"}
            while not stop.is_set():
                try:
                    await asyncio.shield(stop.wait())
                except asyncio.CancelledError:
                    continue

    agent = make_agent(tmp_path, provider=Stubborn(), cancel_grace_s=0.05)
    agent.followup("go")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.cancel()
    await settle(agent, timeout=2)
    assert turn_ends(agent) == ["aborted"]
    assert events_of(agent, "assistant/message")[0].data["interrupted"] is True
    stop.set()
    await asyncio.sleep(0.01)


async def test_tool_progress_and_meta(tmp_path):
    async def body(args, ctx):
        ctx.progress({"line": "building"})
        return ToolOutput(content="built", meta={"exitCode": 0})

    agent = make_agent(tmp_path, [{"tools": [{"name": "b", "arguments": {}}]}, {"text": "ok"}], tools=[FnTool("b", body)])
    progress = []
    agent.subscribe(only("agent/tool/progress", progress.append))
    agent.followup("go")
    await settle(agent)
    assert progress == [{"callId": events_of(agent, "tool/call")[0].data["callId"], "data": {"line": "building"}}]
    result = events_of(agent, "tool/result")[0].data
    assert result["meta"] == {"exitCode": 0}
    assert "meta" not in agent.derive_messages()[2]
    assert request_texts(agent.provider.requests[1])[-1] == "built"


async def test_hook_listener_ignoring_cancel_is_abandoned_after_grace(tmp_path):
    stop = asyncio.Event()
    entered = asyncio.Event()

    async def deaf(p, next_):
        entered.set()
        while not stop.is_set():
            try:
                await asyncio.shield(stop.wait())
            except asyncio.CancelledError:
                continue
        return await next_()

    agent = make_agent(tmp_path, [{"text": "x"}, {"text": "y"}], cancel_grace_s=0.05)
    off = agent.hooks.waterfall("agent/pre-step", deaf)
    agent.followup("go")
    await asyncio.wait_for(entered.wait(), 2)
    agent.cancel()
    await settle(agent, timeout=2)
    assert turn_ends(agent) == ["aborted"]
    off()
    stop.set()
    agent.followup("again")
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed"]
