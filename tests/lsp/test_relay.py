"""The relay: ordered, coalesced under load, never blocking."""

import asyncio

from agent_lsp.lsp.relay import Relay


def chunk(seq, text, step=1):
    return {"seq": seq, "time": 0, "type": "assistant/chunk",
            "data": {"turn": 1, "step": step, "chunk": {"type": "text-delta", "text": text}}}


def other(seq, type_="step/end"):
    return {"seq": seq, "time": 0, "type": type_, "data": {"turn": 1, "step": 1}}


async def test_events_of_one_loop_iteration_go_out_in_one_notification_with_deltas_merged():
    sent = []
    relay = Relay(lambda m, p: sent.append((m, p)))
    relay.durable("s", chunk(0, "a"))
    relay.durable("s", chunk(1, "b"))
    relay.durable("s", chunk(2, "c", step=2))
    relay.durable("s", other(3))
    assert sent == []  # never synchronously inside the agent's call
    await asyncio.sleep(0.02)
    (method, params), = sent
    assert method == "session/event" and params["sessionId"] == "s"
    events = params["events"]
    assert [e["seq"] for e in events] == [0, 2, 3]
    assert events[0]["data"]["chunk"]["text"] == "ab" and events[0]["lastSeq"] == 1
    assert "lastSeq" not in events[1]


async def test_live_notification_flushes_the_sessions_durable_events_first():
    sent = []
    relay = Relay(lambda m, p: sent.append(m))
    relay.durable("s", other(0, "turn/end"))
    relay.live("s", "agent/status", {"status": "idle"})
    assert sent == ["session/event", "agent/status"]


async def test_a_slow_client_gets_fewer_bigger_notifications_and_no_loss():
    sent = []
    backlog = {"bytes": 10 << 20}
    relay = Relay(lambda m, p: sent.append(p), backlog=lambda: backlog["bytes"], high_water_bytes=1 << 20)
    for i in range(10_000):
        relay.durable("s", chunk(i, "x"))
        if i % 100 == 0:
            await asyncio.sleep(0)
    await asyncio.sleep(0.02)
    assert sent == []  # held back while the client is behind
    backlog["bytes"] = 0
    await asyncio.sleep(0.05)
    text = "".join(e["data"]["chunk"]["text"] for p in sent for e in p["events"])
    assert text == "x" * 10_000
    assert len(sent) <= 2


async def test_tool_output_is_merged_capped_and_sent_after_the_events_before_it():
    sent = []
    relay = Relay(lambda m, p: sent.append((m, p)))
    relay.progress_cap_chars = 10
    relay.durable("s", other(0, "tool/call"))
    for i in range(100):
        relay.tool_progress("s", "c1", {"stream": "stdout", "text": f"{i % 10}"})
    relay.tool_progress("s", "c1", {"stream": "stderr", "text": "err"})
    await asyncio.sleep(0.02)
    assert [m for m, _ in sent] == ["session/event", "agent/tool/progress", "agent/tool/progress"]
    out, err = sent[1][1], sent[2][1]
    assert out["data"] == {"stream": "stdout", "text": "0123456789", "truncated": True} and out["callId"] == "c1"
    assert err["data"] == {"stream": "stderr", "text": "err"}
