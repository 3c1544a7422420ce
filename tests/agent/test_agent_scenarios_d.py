"""Loop scenarios 34–36: crash repair, resume, reconstructability."""

import asyncio
import json

from agent_lsp.agent.events import only
from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore

from agent_helpers import FnTool, events_of, make_agent, settle, types_of


def crashed_session(tmp_path, *, record_call: bool):
    """Write a log that ends mid-tool: assistant asked for c1 (and c2 with no tool/call)."""
    store = SessionStore(tmp_path)
    s = store.create()
    s.append("turn/start", {"turn": 1})
    s.append("step/start", {"turn": 1, "step": 1})
    s.append("user/message", {"turn": 1, "step": 1, "message": {"role": "user", "id": "m1", "source": "user",
                                                                 "content": [{"type": "text", "text": "go"}]},
                              "surfaceOp": "append"})
    s.append("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": [
        {"type": "tool-call", "id": "c1", "name": "t", "arguments": "{}"},
        {"type": "tool-call", "id": "c2", "name": "t", "arguments": "{}"}]}, "surfaceOp": "append",
        "sourceEventSeqs": []})
    if record_call:
        s.append("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "t", "arguments": "{}"}, time=12345)
    s.flush()
    return s.id


async def test_s34_crash_repair(tmp_path):
    sid = crashed_session(tmp_path, record_call=True)
    store = SessionStore(tmp_path)  # a fresh process
    s = store.load(sid)
    types = [e.type for e in s.events]
    assert types[-6:] == ["tool/call", "tool/result", "tool/result", "step/end", "turn/end", "session/end-seed"]
    assert [e.seq for e in s.events] == list(range(len(s.events)))
    r1, r2 = [e for e in s.events if e.type == "tool/result"]
    call_seq = [e.seq for e in s.events if e.type == "tool/call"][0]
    assert r1.data["error"]["code"] == "TOOL_OUTCOME_UNKNOWN" and r1.data["sourceEventSeqs"] == [call_seq]
    assert "verify" in r1.data["error"]["message"].lower()
    assert r2.data["error"]["code"] == "TOOL_NOT_STARTED"
    end = [e for e in s.events if e.type == "turn/end"][0]
    assert end.data["reason"] == {"kind": "interrupted"}
    assert end.time == 12345 and r1.time == 12345
    assert s.events[-1].type == "session/end-seed"
    from agent_lsp.agent.invariants import log_violations

    assert log_violations(s.events) == []
    # the repaired history is balanced: every call has its result
    roles = [m.get("role") for m in [e.data["message"] for e in s.events if "message" in e.data]]
    assert roles == ["user", "assistant", "tool", "tool"]
    # and the repair is durable
    again = SessionStore(tmp_path).load(sid)
    assert [e.type for e in again.events] == types


async def test_s34_not_started_without_tool_call(tmp_path):
    sid = crashed_session(tmp_path, record_call=False)
    s = SessionStore(tmp_path).load(sid)
    codes = [e.data["error"]["code"] for e in s.events if e.type == "tool/result"]
    assert codes == ["TOOL_NOT_STARTED", "TOOL_NOT_STARTED"]


async def test_s35_resume(tmp_path):
    agent = make_agent(tmp_path, [{"text": "first"}])
    agent.followup("one")
    await settle(agent)
    agent.inject("pending ctx")
    await agent.dispose()
    old = [e.to_json() for e in agent.session.events]
    old_history = agent.derive_messages()
    sid = agent.session_id

    store = SessionStore(tmp_path / "sessions")
    session = store.load(sid)
    provider = ScriptedProvider([{"text": "second"}])
    resumed = Agent(session, providers={"scripted": provider}, tools=ToolRegistry(),
                    options=AgentOptions(provider="scripted", model="m1"))
    assert [e.to_json() for e in session.events[:-1]] == old
    assert session.events[-1].type == "session/end-seed"
    assert resumed.derive_messages() == old_history
    assert resumed.status == "idle"
    assert [m["content"][0]["text"] for m in resumed.inbox.next_step] == ["pending ctx"]
    await asyncio.sleep(0.01)
    assert types_of(resumed)[-1] == "session/end-seed"  # resume starts no turn
    resumed.followup("two")
    await settle(resumed)
    assert [e.data["turn"] for e in events_of(resumed, "turn/start")] == [1, 2]
    assert [e.seq for e in session.events] == list(range(len(session.events)))
    headers = events_of(resumed, "request/header")
    assert headers[-1].data["reason"] == "resume"
    texts = ["".join(b["text"] for b in m["content"]) for m in provider.requests[0].messages]
    assert texts[-2:] == ["pending ctx", "two"]


async def test_s36_reconstructability(tmp_path):
    dispatched = []

    def capture(request):
        dispatched.append((request, agent.derive_messages(), dict(events_of(agent, "request/header")[-1].data["header"])))
        return {"text": "ok", "tools": [{"name": "t", "arguments": {}}]} if len(dispatched) == 1 else {"text": "done"}

    agent = make_agent(tmp_path, [capture, capture], tools=[FnTool("t")])
    switched = {"on": False}
    agent.providers["other"] = ScriptedProvider([capture], name="other")

    def route(p, next_):
        if switched["on"]:
            return next_({**p, "config": {**p["config"], "provider": "other", "model": "m2"}})
        return next_()

    agent.hooks.waterfall("agent/request", route)

    def on_result(p):
        switched["on"] = True

    agent.subscribe(only("agent/tool/result", on_result))
    agent.followup("go")
    await settle(agent)
    assert len(dispatched) == 2
    for request, derived, header in dispatched:
        assert list(request.messages) == derived
        assert header["provider"] == request.provider and header["model"] == request.model
        assert header["system"] == request.system and header["tools"] == list(request.tools)
    reasons = [e.data["reason"] for e in events_of(agent, "request/header")]
    assert reasons == ["initial", "change"]


async def test_jsonl_file_matches_events(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    agent.followup("go")
    await settle(agent)
    lines = agent.session.path.read_text().splitlines()
    assert json.loads(lines[0])["kind"] == "agent_lsp.session"
    assert [json.loads(x) for x in lines[1:]] == [e.to_json() for e in agent.session.events]


def test_invariant_checker_reports_violations():
    from agent_lsp.agent.invariants import log_violations
    from agent_lsp.store import Event

    good = [Event(0, 1, "turn/start", {"turn": 1}), Event(1, 1, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})]
    assert log_violations(good) == []
    bad = [Event(0, 1, "turn/start", {"turn": 1}), Event(1, 1, "step/start", {"turn": 1, "step": 1}),
           Event(2, 1, "tool/call", {"turn": 1, "step": 1, "callId": "a"}), Event(3, 1, "step/end", {"turn": 1, "step": 1}),
           Event(5, 1, "turn/start", {"turn": 3})]
    problems = log_violations(bad)
    assert any("unanswered" in p for p in problems)
    assert any("seq 5 at index 4" in p for p in problems)
    assert any("while turn 1 is open" in p for p in problems)
