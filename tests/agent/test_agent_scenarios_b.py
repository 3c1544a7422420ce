"""Loop scenarios 14–22: max-tokens, anchors, tool scheduling."""

import asyncio

from agent_lsp.agent.events import only
from agent_lsp.agent.ports import ToolOutput

from agent_helpers import FnTool, Gate, events_of, make_agent, request_texts, settle, turn_ends, until


def four_calls(name="p"):
    return {"tools": [{"name": name, "arguments": {}, "id": f"c{i}"} for i in range(1, 5)]}


async def test_s14_max_tokens(tmp_path):
    agent = make_agent(tmp_path, [{"maxTokens": "cut"}])
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["max-tokens"]


async def test_s14_max_tokens_is_sticky_and_next_turn_unaffected(tmp_path):
    agent = make_agent(tmp_path, [{"maxTokens": "cut"}, {"text": "rest"}, {"text": "next turn"}])
    steered = {"done": False}

    def stopping(p):
        if not steered["done"]:
            steered["done"] = True
            agent.steer("continue")

    agent.hooks.serial("agent/turn-stopping", stopping)
    agent.followup("go")
    await settle(agent)
    assert len(events_of(agent, "step/start")) == 2
    assert turn_ends(agent) == ["max-tokens"]
    agent.followup("again")
    await settle(agent)
    assert turn_ends(agent) == ["max-tokens", "completed"]


async def test_s15_max_tokens_drops_the_cut_tool_call(tmp_path):
    tool = FnTool("t")
    cut = {"name": "t", "arguments": '{"path": "src/ap'}  # the output limit struck mid-argument
    agent = make_agent(tmp_path, [{"maxTokens": "", "tools": [cut]}], tools=[tool])
    agent.followup("go")
    await settle(agent)
    assert tool.runs == []
    assert events_of(agent, "tool/call") == []
    msg = events_of(agent, "assistant/message")[0].data
    assert msg["message"]["content"] == []
    assert "usage" in msg
    assert [m["role"] for m in agent.derive_messages()] == ["user"]
    assert turn_ends(agent) == ["max-tokens"]


async def test_s15_max_tokens_keeps_the_complete_tool_calls(tmp_path):
    tool = FnTool("t")
    whole = {"name": "t", "arguments": {"path": "a.py"}, "id": "whole"}
    cut = {"name": "t", "arguments": '{"path": "b', "id": "cut"}
    agent = make_agent(tmp_path, [{"maxTokens": "", "tools": [whole, cut]}, {"text": "done"}], tools=[tool])
    agent.followup("go")
    await settle(agent)
    assert [c.data["callId"] for c in events_of(agent, "tool/call")] == ["whole"]
    assert len(tool.runs) == 1
    blocks = events_of(agent, "assistant/message")[0].data["message"]["content"]
    assert [b["id"] for b in blocks if b["type"] == "tool-call"] == ["whole"]
    # The model got the result of the complete call and finished the turn.
    assert request_texts(agent.provider.requests[1])[-1] == "t ok"
    assert turn_ends(agent) == ["completed"]


async def test_s16_empty_stop_anchor(tmp_path):
    agent = make_agent(tmp_path, [{"chunks": [{"type": "finish", "kind": "stop"}]}])
    agent.followup("go")
    await settle(agent)
    msg = events_of(agent, "assistant/message")[0].data
    assert msg["message"]["content"] == []
    assert len(msg["sourceEventSeqs"]) == 1
    assert turn_ends(agent) == ["completed"]
    assert [m["role"] for m in agent.derive_messages()] == ["user"]


async def test_s17_parallel_pool_and_order(tmp_path):
    gate = Gate()
    agent = make_agent(tmp_path, [four_calls(), {"text": "ok"}], tools=[FnTool("p", gate.body, parallel=True)],
                       max_parallel_tool_calls=2)
    agent.followup("go")
    await until(lambda: len(gate.log) == 2)
    await asyncio.sleep(0.01)
    assert gate.log == ["c1-start", "c2-start"]
    gate.release("c1")
    await until(lambda: "c3-start" in gate.log)
    tool_events = [(e.type, e.data["callId"]) for e in agent.session.events if e.type in ("tool/call", "tool/result")]
    assert tool_events[:4] == [("tool/call", "c1"), ("tool/call", "c2"), ("tool/result", "c1"), ("tool/call", "c3")]
    for c in ("c2", "c3", "c4"):
        gate.release(c)
    await settle(agent)
    assert [e.data["callId"] for e in events_of(agent, "tool/result")] == ["c1", "c2", "c3", "c4"]


async def test_s18_out_of_order_settlement(tmp_path):
    gate = Gate()
    pre, post = [], []
    agent = make_agent(tmp_path, [{"tools": [{"name": "p", "arguments": {}, "id": f"c{i}"} for i in (1, 2, 3)]},
                                  {"text": "ok"}],
                       tools=[FnTool("p", gate.body, parallel=True)])

    async def pre_exec(p, next_):
        pre.append(p["callId"])
        return await next_()

    async def post_exec(p, next_):
        post.append(p["callId"])
        return await next_()

    agent.hooks.waterfall("tools/pre-execute", pre_exec)
    agent.hooks.waterfall("tools/post-execute", post_exec)
    agent.followup("go")
    await until(lambda: len(gate.log) == 3)
    gate.release("c2")
    await until(lambda: "c2-end" in gate.log)
    await asyncio.sleep(0.01)
    assert events_of(agent, "tool/result") == []
    gate.release("c3")
    gate.release("c1")
    await settle(agent)
    assert [e.data["callId"] for e in events_of(agent, "tool/result")] == ["c1", "c2", "c3"]
    assert pre == ["c1", "c2", "c3"]
    assert post == ["c1", "c2", "c3"]


async def test_s19_barrier(tmp_path):
    order = []

    def body(tag):
        async def run(args, ctx):
            order.append(f"{ctx.call_id}-start")
            await asyncio.sleep(0.01)
            order.append(f"{ctx.call_id}-end")
            return "ok"
        return run

    agent = make_agent(tmp_path, [{"tools": [{"name": "r", "arguments": {}, "id": "r1"},
                                             {"name": "w", "arguments": {}, "id": "w"},
                                             {"name": "r", "arguments": {}, "id": "r3"}]}, {"text": "ok"}],
                       tools=[FnTool("r", body("r"), parallel=True), FnTool("w", body("w"), parallel=False)])
    agent.followup("go")
    await settle(agent)
    assert order == ["r1-start", "r1-end", "w-start", "w-end", "r3-start", "r3-end"]


async def test_s20_reclassification(tmp_path):
    running = {"now": 0, "max": 0}

    async def x_body(args, ctx):
        running["now"] += 1
        running["max"] = max(running["max"], running["now"])
        await asyncio.sleep(0.01)
        running["now"] -= 1
        return "x"

    x_parallel = FnTool("x", x_body, parallel=True)
    x_exclusive = FnTool("x", x_body, parallel=False)
    registry_holder = {}

    async def replace(args, ctx):
        registry_holder["agent"].tools.add(x_exclusive)
        return "replaced"

    agent = make_agent(tmp_path, [{"tools": [{"name": "replace", "arguments": {}, "id": "r"},
                                             {"name": "x", "arguments": {}, "id": "x1"},
                                             {"name": "x", "arguments": {}, "id": "x2"}]}, {"text": "ok"}],
                       tools=[FnTool("replace", replace), x_parallel])
    registry_holder["agent"] = agent
    agent.followup("go")
    await settle(agent)
    assert running["max"] == 1
    assert [e.data["callId"] for e in events_of(agent, "tool/result")] == ["r", "x1", "x2"]


async def test_s20_result_observer_makes_next_call_exclusive(tmp_path):
    gate = Gate()
    flags = {"exclusive": False}
    tool = FnTool("p", gate.body, parallel=lambda args: not flags["exclusive"])
    agent = make_agent(tmp_path, [four_calls(), {"text": "ok"}], tools=[tool], max_parallel_tool_calls=3)

    def on_result(p):
        if p["callId"] == "c1":
            flags["exclusive"] = True

    agent.subscribe(only("agent/tool/result", on_result))
    agent.followup("go")
    await until(lambda: len(gate.log) == 3)
    gate.release("c1")
    await until(lambda: "c1-end" in gate.log)
    await asyncio.sleep(0.02)
    assert "c4-start" not in gate.log  # replenishment stopped: c4 is now a barrier
    gate.release("c2")
    gate.release("c3")
    await until(lambda: "c4-start" in gate.log)
    gate.release("c4")
    await settle(agent)
    assert [e.data["callId"] for e in events_of(agent, "tool/result")] == ["c1", "c2", "c3", "c4"]


async def test_s21_pre_execute_deny_and_throw(tmp_path):
    tool = FnTool("t", parallel=True)
    post = []
    agent = make_agent(tmp_path, [{"tools": [{"name": "t", "arguments": {}, "id": f"c{i}"} for i in (1, 2, 3)]},
                                  {"text": "ok"}], tools=[tool])

    async def pre_exec(p, next_):
        if p["callId"] == "c2":
            return {"kind": "deny", "reason": "nope"}
        if p["callId"] == "c3":
            raise RuntimeError("pre exploded")
        return await next_()

    async def post_exec(p, next_):
        post.append(p["callId"])
        return await next_()

    agent.hooks.waterfall("tools/pre-execute", pre_exec)
    agent.hooks.waterfall("tools/post-execute", post_exec)
    agent.followup("go")
    await settle(agent)
    assert tool.runs == ["c1"]
    results = events_of(agent, "tool/result")
    assert [r.data["callId"] for r in results] == ["c1", "c2", "c3"]
    assert "blocked by policy" in results[1].data["message"]["content"][0]["text"]
    assert "pre exploded" in results[2].data["message"]["content"][0]["text"]
    assert results[1].data["message"]["isError"] and results[2].data["message"]["isError"]
    assert post == ["c1", "c2"]
    assert len(agent.provider.requests) == 2
    assert turn_ends(agent) == ["completed"]


async def test_s21_unknown_tool_and_invalid_arguments_are_results(tmp_path):
    from pydantic import BaseModel

    class Args(BaseModel):
        path: str

    agent = make_agent(tmp_path, [{"tools": [{"name": "nope", "arguments": {}, "id": "u"},
                                             {"name": "read", "arguments": "{not json", "id": "j"},
                                             {"name": "read", "arguments": {"path": 3}, "id": "v"}]},
                                  {"text": "ok"}], tools=[FnTool("read", input_model=Args)])
    agent.followup("go")
    await settle(agent)
    results = {e.data["callId"]: e.data for e in events_of(agent, "tool/result")}
    assert results["u"]["error"]["code"] == "UNKNOWN_TOOL"
    assert results["j"]["error"]["code"] == "INVALID_ARGUMENTS"
    assert results["v"]["error"]["code"] == "INVALID_ARGUMENTS"
    assert turn_ends(agent) == ["completed"]


async def test_s22_abort_mid_pool(tmp_path):
    gate = Gate()

    async def body(args, ctx):
        await gate.body(args, ctx)
        return ToolOutput(content=f"{ctx.call_id} done", additional_contexts=[f"ctx-{ctx.call_id}"])

    excl = FnTool("excl")
    agent = make_agent(tmp_path, [{"tools": [*four_calls()["tools"], {"name": "excl", "arguments": {}, "id": "e"}]},
                                  {"text": "later"}],
                       tools=[FnTool("p", body, parallel=True), excl], max_parallel_tool_calls=2)
    agent.followup("go")
    await until(lambda: len(gate.log) == 2)
    agent.cancel()
    gate.release("c1")
    gate.release("c2")
    await settle(agent)
    calls = [e.data["callId"] for e in events_of(agent, "tool/call")]
    results = events_of(agent, "tool/result")
    assert calls == ["c1", "c2", "c3", "c4", "e"]
    assert [r.data["callId"] for r in results] == ["c1", "c2", "c3", "c4", "e"]
    for r in results[2:]:
        assert r.data["error"]["code"] == "TOOL_ABORTED_BEFORE_DISPATCH"
        assert r.data["error"]["name"] == "AbortError"
    assert not results[0].data["message"]["isError"]
    assert excl.runs == []
    assert [m["content"][0]["text"] for m in agent.inbox.next_step] == ["ctx-c1", "ctx-c2"]
    assert not [e for e in events_of(agent, "user/message") if e.data["message"]["source"] == "tool"]
    assert events_of(agent, "turn/end")[0].data["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
    agent.followup("next")
    await settle(agent)
    texts = request_texts(agent.provider.requests[-1])
    assert texts[-3:] == ["ctx-c1", "ctx-c2", "next"]
