"""Recovery: transient retry with backoff, fallback model."""

import random

from agent_lsp.agent import RetryOptions
from agent_lsp.agent.retry import backoff_delay_s
from agent_lsp.llm.scripted import ScriptedProvider

from agent_helpers import events_of, make_agent, settle, statuses, turn_ends

FAST = RetryOptions(base_delay_s=0.001, max_delay_s=0.01)


async def test_transient_failures_retry_in_same_step_with_durable_events(tmp_path):
    agent = make_agent(tmp_path, [{"fail": "RATE_LIMIT"}, {"inband": "SERVER"}, {"text": "ok"}], retry=FAST)
    seen = statuses(agent)
    agent.followup("go")
    await settle(agent)
    retries = events_of(agent, "llm/retry")
    assert [(r.data["turn"], r.data["step"], r.data["retry"], r.data["failure"]["code"]) for r in retries] == [
        (1, 1, 1, "RATE_LIMIT"), (1, 1, 2, "SERVER")]
    started = events_of(agent, "llm/retry-started")
    assert [s.data["retryId"] for s in started] == [r.data["retryId"] for r in retries]
    assert len(events_of(agent, "step/start")) == 1 and len(events_of(agent, "turn/start")) == 1
    assert turn_ends(agent) == ["completed"]
    assert seen == ["running", "idle"]


async def test_retry_budget_is_bounded(tmp_path):
    agent = make_agent(tmp_path, [{"fail": "OVERLOADED"}] * 10, retry=RetryOptions(base_delay_s=0.001, max_delay_s=0.01, max_retries=5))
    agent.followup("go")
    await settle(agent)
    assert len(events_of(agent, "llm/retry")) == 5
    assert len(agent.provider.requests) == 6
    end = events_of(agent, "turn/end")[0].data["reason"]
    assert end["kind"] == "error" and end["error"]["code"] == "OVERLOADED"


async def test_non_transient_failures_are_not_retried(tmp_path):
    for code in ("AUTH", "BAD_REQUEST", "QUOTA", "CONTENT_FILTER"):
        agent = make_agent(tmp_path / code, [{"fail": code}, {"text": "never"}], retry=FAST)
        agent.followup("go")
        await settle(agent)
        assert events_of(agent, "llm/retry") == []
        assert events_of(agent, "turn/end")[0].data["reason"]["error"]["code"] == code


async def test_retry_can_be_disabled(tmp_path):
    agent = make_agent(tmp_path, [{"fail": "RATE_LIMIT"}, {"text": "never"}], retry=RetryOptions(enabled=False))
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["error"]


async def test_retry_after_is_honoured(tmp_path):
    agent = make_agent(tmp_path, [{"fail": "RATE_LIMIT", "retryAfterMs": 7}, {"text": "ok"}])
    agent.followup("go")
    await settle(agent)
    assert events_of(agent, "llm/retry")[0].data["delayMs"] == 7


def test_backoff_is_exponential_capped_with_jitter():
    rng = random.Random(1)
    delays = [backoff_delay_s(n, base=0.5, cap=10.0, jitter=0.1, rng=rng) for n in range(1, 8)]
    for n, d in enumerate(delays, start=1):
        nominal = min(10.0, 0.5 * 2 ** (n - 1))
        assert nominal * 0.9 - 1e-9 <= d <= min(10.0, nominal * 1.1) + 1e-9
    assert backoff_delay_s(1, base=0.5, cap=10.0, jitter=0.1, retry_after_ms=2500) == 2.5
    # a Retry-After beyond the cap is ignored in favour of the backoff
    assert backoff_delay_s(1, base=0.5, cap=10.0, jitter=0.0, retry_after_ms=60_000) == 0.5


async def test_fallback_model_when_primary_unavailable(tmp_path):
    backup = ScriptedProvider([{"text": "from backup"}], name="backup")
    agent = make_agent(tmp_path, [{"fail": "MODEL_UNAVAILABLE"}], fallback_provider="backup", fallback_model="b1")
    agent.providers["backup"] = backup
    agent.followup("go")
    await settle(agent)
    assert turn_ends(agent) == ["completed"]
    assert backup.requests[0].model == "b1"
    headers = events_of(agent, "request/header")
    assert [h.data["reason"] for h in headers] == ["initial", "change"]
    msg = events_of(agent, "assistant/message")[0].data["message"]
    assert (msg["provider"], msg["model"]) == ("backup", "b1")


async def test_missing_provider_is_a_turn_error(tmp_path):
    agent = make_agent(tmp_path, [{"text": "x"}])
    agent.options.provider = "nowhere"
    agent.followup("go")
    await settle(agent)
    end = events_of(agent, "turn/end")[0].data["reason"]
    assert end["kind"] == "error" and end["error"]["code"] == "MODEL_UNAVAILABLE"


async def test_a_failure_to_connect_is_retried_once_after_the_base_delay(tmp_path):
    refused = {"fail": "NETWORK", "phase": "connect", "message": "cannot connect to http://model.example/v1"}
    agent = make_agent(tmp_path, [refused] * 6, retry=RetryOptions(base_delay_s=0.001, max_delay_s=0.01, max_retries=5))
    agent.followup("go")
    await settle(agent)
    (retry,) = events_of(agent, "llm/retry")
    assert retry.data["delayMs"] == 1 and retry.data["failure"]["phase"] == "connect"
    assert len(agent.provider.requests) == 2
    assert events_of(agent, "turn/end")[0].data["reason"]["error"]["code"] == "NETWORK"

    agent = make_agent(tmp_path / "then-up", [refused, {"text": "ok"}], retry=FAST)
    agent.followup("go")
    await settle(agent)
    assert len(events_of(agent, "llm/retry")) == 1 and turn_ends(agent) == ["completed"]
