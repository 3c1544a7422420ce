"""Loop scenarios 30–33 and manual compaction (R10.9)."""

import asyncio

import pytest

from agent_lsp.agent.events import only
from agent_lsp.agent.compaction import PRUNE_MARKER, CompactionError
from agent_lsp.agent.options import CompactionOptions
from agent_lsp.llm.scripted import ScriptedProvider

from agent_helpers import FnTool, events_of, make_agent, request_texts, settle, turn_ends


class Router:
    """Conversation replies and summary replies from separate queues."""

    def __init__(self, conversation, summaries=None):
        self.conversation = list(conversation)
        self.summaries = list(summaries or [{"text": "short summary of the work"}])
        self.conversation_requests = []
        self.summary_requests = []

    def __call__(self, request):
        if request.options.get("purpose") == "compaction-summary":
            self.summary_requests.append(request)
            return self.summaries.pop(0) if self.summaries else {"text": "short summary"}
        self.conversation_requests.append(request)
        return self.conversation.pop(0) if self.conversation else {"text": "fine"}

    def provider(self, context_window=128_000):
        return ScriptedProvider([self] * 200, context_window=context_window)


def all_text(request):
    return "\n".join(request_texts(request))


async def seeded_agent(tmp_path, router, **options):
    agent = make_agent(tmp_path, provider=router.provider(options.pop("context_window", 128_000)), **options)
    agent.followup("OLD sentinel " + "context " * 100)
    await settle(agent)
    agent.followup("second question " + "more " * 100)
    await settle(agent)
    return agent


def inside_step(agent, turn, step, types=("compaction/start", "compaction/summary", "compaction/end")):
    start = [e.seq for e in events_of(agent, "step/start") if e.data == {"turn": turn, "step": step}][0]
    end = [e.seq for e in events_of(agent, "step/end") if e.data == {"turn": turn, "step": step}][0]
    found = [e for e in agent.session.events if e.type in types]
    return bool(found) and all(start < e.seq < end for e in found)


@pytest.mark.parametrize("overflow", [{"fail": "CONTEXT_WINDOW_EXCEEDED"}, {"inband": "CONTEXT_WINDOW_EXCEEDED"}])
async def test_s30_overflow_recovery(tmp_path, overflow):
    router = Router([{"text": "answer one " * 30}, {"text": "answer two " * 30}, overflow, {"text": "final"}])
    agent = await seeded_agent(tmp_path, router, compaction=CompactionOptions(max_overflow_retries=1))
    agent.followup("third")
    await settle(agent)
    turn3 = router.conversation_requests[2:]
    assert len(turn3) == 2
    # The rejected request is not what is sent to be summarised: the window is at
    # most its size, so the history goes in pieces, each one message of transcript.
    assert router.summary_requests
    assert all(len(r.messages) == 1 and not r.tools for r in router.summary_requests)
    assert "RECOVERY CHECKPOINT" in all_text(turn3[1])
    assert "OLD sentinel" not in all_text(turn3[1])
    assert inside_step(agent, 3, 1)
    assert len([e for e in events_of(agent, "step/start") if e.data["turn"] == 3]) == 1
    assert turn_ends(agent) == ["completed"] * 3
    summary = events_of(agent, "compaction/summary")[0].data
    checkpoint = [e for e in events_of(agent, "user/message") if e.data["message"]["source"] == "compaction"][0]
    assert checkpoint.data["surfaceOp"]["kind"] == "replace"
    assert checkpoint.data["sourceEventSeqs"][2:] == summary["shadowedSeqs"]


async def test_s31_overflow_without_progress_keeps_error(tmp_path):
    # The summary is not smaller than what it would replace: nothing is replaced, no retry.
    router = Router([{"text": "a"}, {"text": "b"}, {"fail": "CONTEXT_WINDOW_EXCEEDED"}],
                    summaries=[{"text": "huge " * 5000}] * 10)
    agent = await seeded_agent(tmp_path, router)
    agent.followup("third")
    await settle(agent)
    end = events_of(agent, "turn/end")[-1].data["reason"]
    assert end["kind"] == "error" and end["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert len(router.conversation_requests) == 3
    assert events_of(agent, "compaction/end")[-1].data.get("error")


async def test_s31_prune_landed_then_summary_threw_still_retries(tmp_path):
    big = "x" * 20000

    async def dump(args, ctx):
        return big

    router = Router([{"tools": [{"name": "dump", "arguments": {}}]}, {"text": "seen"},
                     {"fail": "CONTEXT_WINDOW_EXCEEDED"}, {"text": "recovered"}],
                    summaries=[{"fail": "SERVER"}])
    agent = make_agent(tmp_path, provider=router.provider(), tools=[FnTool("dump", dump)])
    agent.followup("dump it")
    await settle(agent)
    agent.followup("again")
    await settle(agent)
    assert len(events_of(agent, "compaction/prune")) == 1
    assert turn_ends(agent) == ["completed", "completed"]
    assert len(router.conversation_requests) == 4


async def test_s31_cancel_during_compaction_means_no_retry(tmp_path):
    router = Router([{"text": "a"}, {"text": "b"}, {"fail": "CONTEXT_WINDOW_EXCEEDED"}], summaries=[{"hang": "sum"}])
    agent = await seeded_agent(tmp_path, router)
    agent.followup("third")

    async def wait_summary():
        while not router.summary_requests:
            await asyncio.sleep(0.001)

    await asyncio.wait_for(wait_summary(), 2)
    agent.cancel()
    await settle(agent)
    assert turn_ends(agent)[-1] == "aborted"
    assert len(router.conversation_requests) == 3


async def test_s31_budget_zero_disables_overflow_recovery_only(tmp_path):
    router = Router([{"text": "a"}, {"text": "b"}, {"fail": "CONTEXT_WINDOW_EXCEEDED"}])
    agent = await seeded_agent(tmp_path, router, compaction=CompactionOptions(max_overflow_retries=0))
    agent.followup("third")
    await settle(agent)
    assert router.summary_requests == []
    assert events_of(agent, "turn/end")[-1].data["reason"]["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"


def assert_balanced(messages):
    """Every tool result follows its call, and every call is answered."""
    open_calls = set()
    for m in messages:
        if m["role"] == "assistant":
            open_calls |= {b["id"] for b in m["content"] if b["type"] == "tool-call"}
        elif m["role"] == "tool":
            assert m["callId"] in open_calls
            open_calls.discard(m["callId"])
    return open_calls


async def test_s32_pressure_between_steps(tmp_path):
    async def work(args, ctx):
        return "result " * 150  # ~1050 chars

    steps = [{"text": f"step {i}", "tools": [{"name": "work", "arguments": {"i": i}}]} for i in range(8)]
    router = Router([*steps, {"text": "all done"}])
    agent = make_agent(tmp_path, provider=router.provider(context_window=2000), tools=[FnTool("work", work)])
    checkpoints_balanced = []

    def on_request(p, next_):
        checkpoints_balanced.append(not assert_balanced(agent.derive_messages()))
        return next_()

    agent.hooks.waterfall("agent/request", on_request)
    agent.followup("run the job")
    await settle(agent)
    assert turn_ends(agent) == ["completed"]
    starts = events_of(agent, "compaction/start")
    assert starts, "pressure should have compacted"
    order = [(e.seq, e.type) for e in agent.session.events if e.type in ("step/start", "step/end", "compaction/start")]
    for i, (seq, t) in enumerate(order):
        if t == "compaction/start":
            assert order[i - 1][1] == "step/end" and order[i + 1][1] == "step/start"
    assert all(checkpoints_balanced)
    assert not events_of(agent, "compaction/end")[-1].data.get("error")


async def test_s33_pruning_first(tmp_path):
    async def dump(args, ctx):
        return "H" * 5000 + "M" * 5000 + "T" * 2000

    router = Router([{"tools": [{"name": "dump", "arguments": {}}]}, {"text": "ok"}])
    agent = make_agent(tmp_path, provider=router.provider(context_window=3000), tools=[FnTool("dump", dump)])
    agent.followup("go")
    await settle(agent)
    assert router.summary_requests == []
    pruned = [e for e in events_of(agent, "tool/result") if isinstance(e.data["surfaceOp"], dict)]
    original = [e for e in events_of(agent, "tool/result") if e.data["surfaceOp"] == "append"][0]
    assert len(pruned) == 1
    text = pruned[0].data["message"]["content"][0]["text"]
    head, tail = text.split(PRUNE_MARKER)
    # shrunk to what a 3000-token window leaves room for: head and tail kept
    assert set(head) == {"H"} and set(tail) == {"T"} and len(text) < 3000
    assert pruned[0].data["surfaceOp"] == {"kind": "replace", "start": original.seq, "end": original.seq}
    assert pruned[0].data["sourceEventSeqs"] == [original.seq]
    assert events_of(agent, "compaction/prune")[0].seq == pruned[0].seq - 1
    assert PRUNE_MARKER in all_text(router.conversation_requests[1])
    assert agent.compaction.prune() == 0  # idempotent


async def test_s33_below_threshold_nothing_pruned(tmp_path):
    async def dump(args, ctx):
        return "x" * 12000

    router = Router([{"tools": [{"name": "dump", "arguments": {}}]}, {"text": "ok"}])
    agent = make_agent(tmp_path, provider=router.provider(context_window=100_000), tools=[FnTool("dump", dump)])
    agent.followup("go")
    await settle(agent)
    assert events_of(agent, "compaction/prune") == []


async def test_manual_compact_now(tmp_path):
    router = Router([{"text": "answer one " * 30}, {"text": "answer two " * 30}])
    agent = await seeded_agent(tmp_path, router)
    seen = []
    agent.subscribe(only("agent/status", lambda p: seen.append(p["status"])))
    result = await agent.compact_now()
    assert result is not None
    assert seen == []  # maintenance reports idle
    start = events_of(agent, "compaction/start")[0].data
    assert start["turn"] is None
    history = agent.derive_messages()
    assert len(history) == 1 and "RECOVERY CHECKPOINT" in history[0]["content"][0]["text"]
    before = len(agent.session.events)
    assert await agent.compact_now() is None  # only a checkpoint left: a no-op writes nothing
    assert len(agent.session.events) == before
    agent.followup("after")
    await settle(agent)
    assert "RECOVERY CHECKPOINT" in all_text(router.conversation_requests[-1])


async def test_manual_compact_busy_while_running(tmp_path):
    agent = make_agent(tmp_path, [{"hang": "x"}])
    agent.followup("go")
    with pytest.raises(CompactionError) as info:
        await agent.compact_now()
    assert info.value.kind == "busy"
    agent.cancel()
    await settle(agent)


async def test_send_during_maintenance_is_latched(tmp_path):
    router = Router([{"text": "a " * 50}, {"text": "b " * 50}, {"text": "c"}], summaries=[{"hang": ""}])
    agent = await seeded_agent(tmp_path, router)
    task = asyncio.ensure_future(agent.compact_now())
    while not router.summary_requests:
        await asyncio.sleep(0.001)
    agent.followup("during")
    assert agent.status == "idle"
    agent.cancel(keep_inbox=True)
    with pytest.raises(CompactionError):
        await task
    await settle(agent)
    assert turn_ends(agent) == ["completed", "completed", "completed"]


async def test_overflow_and_transient_budgets_are_independent(tmp_path):
    from agent_lsp.agent import RetryOptions

    router = Router([{"text": "answer one " * 30}, {"text": "answer two " * 30},
                     {"fail": "CONTEXT_WINDOW_EXCEEDED"}, {"fail": "SERVER"}, {"text": "final"}])
    agent = await seeded_agent(tmp_path, router, retry=RetryOptions(base_delay_s=0.001, max_delay_s=0.01))
    agent.followup("third")
    await settle(agent)
    assert len(router.conversation_requests[2:]) == 3
    assert router.summary_requests
    retries = [(e.data["turn"], e.data["step"], e.data["retry"], e.data["failure"]["code"])
               for e in events_of(agent, "llm/retry")]
    assert retries == [(3, 1, 1, "SERVER")]
    assert turn_ends(agent)[-1] == "completed"
