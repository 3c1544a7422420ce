"""The one stream out of the agent: every event fits its model in
agent/events.py, durable and live events arrive through one subscription,
and payloads are complete where they are made."""

from agent_lsp.agent.durable_events import DURABLE_EVENTS
from agent_lsp.agent.events import LiveEvent
from agent_lsp.agent.live_events import LIVE_EVENTS
from agent_lsp.store.session import Event

from agent_helpers import FnTool, events_of, make_agent, settle, until


def check(event) -> None:
    models = DURABLE_EVENTS if isinstance(event, Event) else LIVE_EVENTS
    assert event.type in models, f"{event.type} has no model"
    model = models[event.type].model_validate(event.data)
    assert not model.model_extra, f"{event.type}: fields the model does not name: {sorted(model.model_extra)}"


async def test_one_subscription_sees_durable_and_live_events_in_order_and_each_fits_its_model(tmp_path):
    seen = []
    script = [
        {"reasoning": "think", "text": "reading", "tools": [{"name": "probe", "arguments": {"x": 1}, "id": "c1"}]},
        {"fail": "RATE_LIMIT", "retryAfterMs": 1},
        {"text": "done"},
    ]

    async def probe(args, ctx):
        ctx.progress({"stream": "stdout", "text": "hi\n"})
        return "ok"

    agent = make_agent(tmp_path, script, tools=[FnTool("probe", probe)])
    agent.subscribe(seen.append)
    agent.followup("go")
    await settle(agent)
    for event in seen:
        check(event)
    kinds = [e.type for e in seen]
    assert kinds.index("agent/inbox/inserted") < kinds.index("agent/status") < kinds.index("turn/start")
    assert kinds.index("turn/end") < len(kinds) - 1 and kinds[-1] == "agent/status"
    assert {"agent/tool/progress", "agent/tool/result", "llm/retry", "tool/result"} <= set(kinds)
    durable = [e.seq for e in seen if isinstance(e, Event)]
    assert durable == list(range(len(agent.session.events)))  # every durable event once, in seq order


async def test_inserted_and_discarded_name_their_list_and_errors_carry_code_and_message(tmp_path):
    live = []
    agent = make_agent(tmp_path, [{"hang": "partial"}, {"chunks": [{"type": "finish", "kind": "error"}]}])
    agent.subscribe(lambda e: live.append(e) if isinstance(e, LiveEvent) else None)
    agent.followup("first")
    await until(lambda: events_of(agent, "assistant/chunk"))  # the turn runs: a steer goes to its next step
    agent.steer("now")
    agent.followup("later")
    agent.cancel()
    await settle(agent)
    inserted = [(e.data["target"], e.data["message"]["content"][0]["text"]) for e in live if e.type == "agent/inbox/inserted"]
    assert inserted == [("next-turn", "first"), ("next-step", "now"), ("next-turn", "later")]
    discarded = [(e.data["target"], e.data["message"]["content"][0]["text"]) for e in live if e.type == "agent/inbox/discarded"]
    assert sorted(discarded) == [("next-step", "now"), ("next-turn", "later")]
    live.clear()
    agent.followup("again")
    await settle(agent)
    (error,) = [e for e in live if e.type == "agent/error"]
    assert error.data["error"]["code"] == "UNKNOWN" and error.data["error"]["message"]
    check(error)
    turn_end = agent.session.events[-1]
    assert turn_end.data["reason"]["error"] == error.data["error"]
