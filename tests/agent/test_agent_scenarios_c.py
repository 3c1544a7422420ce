"""Loop scenarios 23–29: cancellation, disposal, request errors."""

import asyncio

from agent_lsp.agent.events import only
from agent_helpers import FnTool, events_of, make_agent, request_texts, settle, statuses, turn_ends, types_of, until


def aborted(cause="user"):
    return {"kind": "aborted", "reason": {"kind": cause}}


async def test_s23_cancel_after_assistant_message(tmp_path):
    tool = FnTool("t")
    agent = make_agent(tmp_path, [{"text": "x", "tools": [{"name": "t", "arguments": {}, "id": "c1"}]}, {"text": "ok"}],
                       tools=[tool])

    def observer(e):
        if e.type == "assistant/message" and e.data["turn"] == 1:
            agent.cancel()

    agent.session.subscribe(observer)
    agent.followup("go")
    await settle(agent)
    assert tool.runs == []
    assert [e.data["callId"] for e in events_of(agent, "tool/call")] == ["c1"]
    result = events_of(agent, "tool/result")[0]
    assert result.data["error"]["code"] == "TOOL_ABORTED_BEFORE_DISPATCH"
    assert turn_ends(agent) == ["aborted"]
    agent.followup("next")
    await settle(agent)
    roles = [m["role"] for m in agent.provider.requests[-1].messages]
    assert roles == ["user", "assistant", "tool", "user"]
    assert agent.provider.requests[-1].messages[2]["isError"] is True


async def test_s24_mid_stream_cancel(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "partial"}, {"text": "ok"}])
    agent.followup("go")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 9)
    agent.cancel()
    await settle(agent)
    msg = events_of(agent, "assistant/message")[0]
    step_end = events_of(agent, "step/end")[0]
    turn_end = events_of(agent, "turn/end")[0]
    assert msg.data["interrupted"] is True
    assert msg.data["message"]["content"] == [{"type": "text", "text": "partial"}]
    assert msg.data["sourceEventSeqs"] == [c.seq for c in events_of(agent, "assistant/chunk")]
    assert msg.seq < step_end.seq < turn_end.seq
    assert turn_end.data["reason"] == aborted()
    agent.followup("again")
    await settle(agent)
    assert "partial" in request_texts(agent.provider.requests[-1])


async def test_s24_reasoning_only_keeps_usage(tmp_path):
    agent = make_agent(tmp_path, [{"reasoning": "thinking", "hang": True, "usage": {"inputTokens": 5, "outputTokens": 2}}])
    agent.followup("go")
    await until(lambda: any(e.data["chunk"]["type"] == "usage" for e in events_of(agent, "assistant/chunk")))
    agent.cancel()
    await settle(agent)
    msg = events_of(agent, "assistant/message")[0].data
    assert msg["interrupted"] is True
    assert msg["message"]["content"] == [{"type": "reasoning", "text": "thinking"}]
    assert msg["usage"] == {"inputTokens": 5, "outputTokens": 2}


async def test_s24_partial_tool_call_only_writes_no_message(tmp_path):
    agent = make_agent(tmp_path, [{"hang": True, "partialTool": {"name": "t", "arguments": "{\"pa"}}])
    agent.followup("go")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.cancel()
    await settle(agent)
    assert events_of(agent, "assistant/message") == []
    assert turn_ends(agent) == ["aborted"]


async def test_s24_cancel_keeps_text_before_half_streamed_tool_call(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "before", "partialTool": {"name": "t", "arguments": "{"}}])
    agent.followup("go")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 10)
    agent.cancel()
    await settle(agent)
    assert events_of(agent, "assistant/message")[0].data["message"]["content"] == [{"type": "text", "text": "before"}]


async def test_s25_cancel_in_running_listener_no_turn_start(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    seen = statuses(agent)

    def on_status(p):
        if p["status"] == "running":
            agent.cancel()

    off = agent.subscribe(only("agent/status", on_status))
    agent.followup("go")
    await settle(agent)
    assert events_of(agent, "turn/start") == []
    assert seen == ["running", "idle"]
    off()
    agent.followup("again")
    await settle(agent)
    assert turn_ends(agent) == ["completed"]


async def test_s25_cancel_right_after_followup_zero_step_turn(tmp_path):
    for keep in (False, True):
        agent = make_agent(tmp_path / str(keep), [{"text": "ok"}])
        agent.followup("go")
        agent.cancel(keep_inbox=keep)
        await settle(agent)
        assert [t for t in types_of(agent) if t != "agent/inbox/spliced"] == ["turn/start", "turn/end"]
        assert events_of(agent, "turn/end")[0].data["reason"] == aborted()
        assert agent.provider.requests == []
        # the claim is not undone, and no canceled splice was needed
        assert not [e for e in events_of(agent, "agent/inbox/spliced") if e.data.get("outcome")]


async def test_s25_cancel_in_step_start_observer(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])

    def observer(e):
        if e.type == "step/start":
            agent.cancel()

    agent.session.subscribe(observer)
    agent.followup("go")
    await settle(agent)
    t = types_of(agent)
    assert t.count("step/start") == 1 and t.count("step/end") == 1
    assert "assistant/chunk" not in t
    assert agent.provider.requests == []
    assert turn_ends(agent) == ["aborted"]


async def test_s25_cancel_in_turn_stopping(tmp_path):
    agent = make_agent(tmp_path, [{"text": "1"}, {"text": "2"}])

    def stopping(p):
        agent.steer("more")
        agent.cancel()

    agent.hooks.serial("agent/turn-stopping", stopping)
    agent.followup("go")
    await settle(agent)
    assert len(events_of(agent, "step/start")) == 1
    assert turn_ends(agent) == ["aborted"]


async def test_s26_wake_latch(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "zzz"}, {"text": "B done"}])
    seen = statuses(agent)
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 3)
    agent.cancel(keep_inbox=True)
    agent.followup("B")
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed"]
    assert request_texts(agent.provider.requests[-1])[-1] == "B"
    assert seen == ["running", "idle"]


async def test_s26_cancel_without_keep_inbox_clears_latch(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "zzz"}, {"text": "B done"}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 3)
    agent.cancel(keep_inbox=True)
    agent.followup("B")
    agent.cancel()
    await settle(agent)
    assert turn_ends(agent) == ["aborted"]
    assert agent.inbox.next_turn == []


async def test_s26_removing_latched_message_means_no_extra_turn(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "zzz"}, {"text": "B done"}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 3)
    agent.cancel(keep_inbox=True)
    b = agent.followup("B")
    assert agent.remove(b["id"]) is True
    await settle(agent)
    assert turn_ends(agent) == ["aborted"]


async def test_s26_steer_during_abort_is_redirected_to_next_turn(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "zzz"}, {"text": "S done"}])
    agent.followup("A")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 3)
    agent.cancel(keep_inbox=True)
    agent.steer("S")
    assert [m["content"][0]["text"] for m in agent.inbox.next_turn] == ["S"]
    await settle(agent)
    assert turn_ends(agent) == ["aborted", "completed"]


async def test_s27_first_cause_wins(tmp_path):
    reasons = []

    def reply(request):
        reasons.append(request.signal)
        return {"hang": "x"}

    agent = make_agent(tmp_path, [reply])
    agent.followup("go")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.cancel("parent")
    agent.cancel("user")
    await settle(agent)
    assert reasons[0].reason == {"kind": "parent"}
    assert events_of(agent, "turn/end")[0].data["reason"] == aborted("parent")


async def test_s27_dispose_while_running(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}, {"text": "tail"}])
    seen = statuses(agent)
    agent.followup("go")
    agent.followup("tail")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    disposing = asyncio.ensure_future(agent.dispose())
    await asyncio.sleep(0)
    try:
        agent.followup("during disposal")
    except RuntimeError:
        pass
    await asyncio.wait_for(disposing, 5)
    assert seen == ["running", "idle"]
    assert events_of(agent, "turn/end")[0].data["reason"] == aborted("disposed")
    assert len(events_of(agent, "turn/start")) == 1
    assert len(agent.provider.requests) == 1


async def test_s27_user_cancel_preserved_when_disposal_races(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}])
    agent.followup("go")
    await until(lambda: len(events_of(agent, "assistant/chunk")) >= 2)
    agent.cancel()
    await agent.dispose()
    assert events_of(agent, "turn/end")[0].data["reason"] == aborted("user")


async def test_s28_request_error_retry_in_same_step(tmp_path):
    agent = make_agent(tmp_path, [{"fail": "RATE_LIMIT"}, {"fail": "SERVICE_UNAVAILABLE"}, {"text": "ok"}],
                       retry=__import__("agent_lsp.agent", fromlist=["RetryOptions"]).RetryOptions(enabled=False))
    seen = statuses(agent)
    saw = []

    def on_error(p, next_):
        saw.append((p["turn"], p["step"]))
        return {"kind": "retry"}

    agent.hooks.waterfall("agent/request-error", on_error)
    agent.followup("go")
    await settle(agent)
    assert saw == [(1, 1), (1, 1)]
    assert len(events_of(agent, "turn/start")) == 1
    assert len(events_of(agent, "step/start")) == 1
    msgs = events_of(agent, "assistant/message")
    assert len(msgs) == 1
    finish_seqs = [c.seq for c in events_of(agent, "assistant/chunk") if c.data["chunk"]["type"] == "finish"]
    # only the last attempt's chunks are cited
    last_attempt = [c.seq for c in events_of(agent, "assistant/chunk") if c.seq > finish_seqs[1]]
    assert msgs[0].data["sourceEventSeqs"] == last_attempt
    assert seen == ["running", "idle"]
    assert turn_ends(agent) == ["completed"]


async def test_s29_request_error_terminal_without_listener(tmp_path):
    from agent_lsp.agent import RetryOptions

    agent = make_agent(tmp_path, [{"fail": "RATE_LIMIT", "message": "slow down"}], retry=RetryOptions(enabled=False))
    errors = []
    agent.subscribe(only("agent/error", errors.append))
    agent.followup("go")
    await settle(agent)
    end = events_of(agent, "turn/end")[0].data["reason"]
    assert end["kind"] == "error"
    assert end["error"]["code"] == "RATE_LIMIT" and end["error"]["message"] == "slow down"
    assert events_of(agent, "assistant/message") == []
    assert len(errors) == 1
    # the thrown failure was logged as a terminal chunk
    assert events_of(agent, "assistant/chunk")[-1].data["chunk"]["kind"] == "error"


async def test_s29_throwing_listener_is_terminal(tmp_path):
    from agent_lsp.agent import RetryOptions

    agent = make_agent(tmp_path, [{"fail": "SERVER"}, {"text": "never"}], retry=RetryOptions(enabled=False))

    def on_error(p, next_):
        raise RuntimeError("listener broke")

    agent.hooks.waterfall("agent/request-error", on_error)
    agent.followup("go")
    await settle(agent)
    end = events_of(agent, "turn/end")[0].data["reason"]
    assert end["kind"] == "error" and end["error"]["code"] == "SERVER"
    assert len(agent.provider.requests) == 1


async def test_s29_cancel_then_retry_is_aborted(tmp_path):
    from agent_lsp.agent import RetryOptions

    agent = make_agent(tmp_path, [{"text": "part", "fail": "SERVER"}, {"text": "never"}], retry=RetryOptions(enabled=False))

    def on_error(p, next_):
        agent.cancel()
        return {"kind": "retry"}

    agent.hooks.waterfall("agent/request-error", on_error)
    agent.followup("go")
    await settle(agent)
    assert len(agent.provider.requests) == 1
    assert events_of(agent, "turn/end")[0].data["reason"] == aborted()
    assert events_of(agent, "assistant/message") == []  # the failed prefix is not written


async def test_s29_request_waterfall_failure_not_offered_to_recovery(tmp_path):
    agent = make_agent(tmp_path, [{"text": "never"}])
    offered = []
    agent.hooks.waterfall("agent/request-error", lambda p, n: offered.append(p) or {"kind": "retry"})

    def bad_request(p, next_):
        raise RuntimeError("routing failed")

    agent.hooks.waterfall("agent/request", bad_request)
    agent.followup("go")
    await settle(agent)
    assert agent.provider.requests == []
    assert offered == []
    assert turn_ends(agent) == ["error"]


async def test_throwing_session_observers_do_not_change_the_outcome(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}, {"text": "ok2"}])

    def bad(e):
        if e.type in ("turn/start", "step/start", "step/end", "turn/end"):
            raise RuntimeError("observer broke")

    agent.session.subscribe(bad)
    agent.followup("a")
    agent.followup("b")
    await settle(agent)
    assert turn_ends(agent) == ["completed", "completed"]


async def test_throwing_turn_stopping_listener_is_a_turn_error(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}, {"text": "ok2"}])
    boom = {"on": True}

    def stopping(p):
        if boom["on"]:
            raise RuntimeError("stop hook broke")

    agent.hooks.serial("agent/turn-stopping", stopping)
    agent.followup("a")
    await settle(agent)
    end = events_of(agent, "turn/end")[0].data["reason"]
    assert end["kind"] == "error" and end["error"]["code"] == "UNKNOWN"
    boom["on"] = False
    agent.followup("b")
    await settle(agent)
    assert turn_ends(agent) == ["error", "completed"]


async def test_tool_meta_that_is_not_json_is_stringified(tmp_path):
    from pathlib import Path

    from agent_lsp.agent.ports import ToolOutput

    async def body(args, ctx):
        return ToolOutput(content="ok", meta={"path": Path("/tmp/x")})

    agent = make_agent(tmp_path, [{"tools": [{"name": "t", "arguments": {}}]}, {"text": "done"}], tools=[FnTool("t", body)])
    agent.followup("go")
    await settle(agent)
    assert events_of(agent, "tool/result")[0].data["meta"] == {"path": "/tmp/x"}
    assert turn_ends(agent) == ["completed"]


async def test_scheduler_failure_waits_for_started_bodies(tmp_path):
    from agent_lsp.agent.ports import ToolOutput

    log = []

    async def bad(args, ctx):
        return ToolOutput(content=[{"type": "text", "text": "x", "oops": {1, 2}}])  # not JSON: the commit fails

    async def slow(args, ctx):
        await asyncio.sleep(0.03)
        log.append(("slow done", len(agent.session.events)))
        return "slow ok"

    agent = make_agent(tmp_path, [{"tools": [{"name": "bad", "arguments": {}, "id": "c1"},
                                             {"name": "slow", "arguments": {}, "id": "c2"}]}],
                       tools=[FnTool("bad", bad, parallel=True), FnTool("slow", slow, parallel=True)])
    agent.followup("go")
    await settle(agent)
    end = events_of(agent, "turn/end")[0]
    assert end.data["reason"]["kind"] == "error"
    assert log and log[0][1] <= end.seq  # the started body settled before turn/end was written
    assert agent.status == "idle"
