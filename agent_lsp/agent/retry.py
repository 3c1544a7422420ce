"""Recovery plugins on `agent/request-error` (R9.4):

- transient retry: RATE_LIMIT, OVERLOADED, SERVICE_UNAVAILABLE, SERVER,
  NETWORK, TIMEOUT, EMPTY_RESPONSE are retried in the same step, up to
  `max_retries` times per step, with exponential backoff (0.5 s .. 10 s,
  +-10 % jitter); a provider Retry-After no longer than the cap replaces the
  backoff. A durable `llm/retry` precedes the wait and `llm/retry-started`
  follows it; a cancel during the wait writes no started event and no retry.
  A failure to connect at all (`phase: "connect"`: refused, unknown host) is
  retried once, after the base delay: a server that is down stays down for
  a few seconds, and the user should hear so in seconds, not after the
  whole backoff (a refused local endpoint is not retried at all).
- fallback model: MODEL_UNAVAILABLE, or OVERLOADED once the transient
  budget for the primary is spent (or retry is disabled), switches the route
  to the fallback provider/model (through `agent/request`, so it is logged
  as a `change` header) and re-sends in the same step, after a durable
  `llm/fallback {turn, step, failure, from, to}`. The switch is sticky
  for the agent's lifetime; the fallback gets its own transient budget (the
  budget is kept per step and route).

User cancels and hook blocks never reach here (cancellation always wins).
"""

from __future__ import annotations

import asyncio
import random
import secrets
from typing import TYPE_CHECKING, Any

from agent_lsp.llm.types import MODEL_UNAVAILABLE, OVERLOADED, TRANSIENT_CODES

if TYPE_CHECKING:
    from agent_lsp.agent.handle import AgentHandle

RETRYABLE = TRANSIENT_CODES | {"TRANSPORT"}
FALLBACK_CODES = frozenset({MODEL_UNAVAILABLE, OVERLOADED})
CONNECT_RETRIES = 1  # retries of a failure to connect at all


def backoff_delay_s(retry: int, *, base: float, cap: float, jitter: float, retry_after_ms: Any = None,
                    rng: random.Random | None = None) -> float:
    if isinstance(retry_after_ms, (int, float)) and 0 <= retry_after_ms / 1000.0 <= cap:
        return retry_after_ms / 1000.0
    delay = min(cap, base * (2 ** (retry - 1)))
    r = (rng or random).uniform(-jitter, jitter)
    return max(0.0, min(cap, delay * (1 + r)))


def install_retry(agent: "AgentHandle") -> None:
    opts = agent.options.retry
    counts: dict[tuple[Any, ...], int] = {}

    async def on_request_error(p: dict[str, Any], next_: Any) -> Any:
        failure = p["failure"]
        if failure.get("code") not in RETRYABLE or failure.get("retryable") is False:
            return await next_()
        key = (p["turn"], p["step"], p.get("provider"), p.get("model"))
        n = counts.get(key, 0)
        connect = failure.get("phase") == "connect"
        if n >= (min(opts.max_retries, CONNECT_RETRIES) if connect else opts.max_retries):
            return await next_()
        n += 1
        counts.clear()  # only the current step and route's budget matters
        counts[key] = n
        if connect:
            delay = min(opts.base_delay_s, opts.max_delay_s)
        else:
            delay = backoff_delay_s(n, base=opts.base_delay_s, cap=opts.max_delay_s, jitter=opts.jitter,
                                    retry_after_ms=failure.get("providerRetryAfterMs"))
        retry_id = f"retry_{secrets.token_hex(4)}"
        agent.session.append("llm/retry", {
            "retryId": retry_id, "turn": p["turn"], "step": p["step"], "retry": n, "provider": p.get("provider"),
            "mode": "normal", "policy": "transient", "failure": failure, "delayMs": int(delay * 1000),
        })
        signal = p["signal"]
        try:
            await asyncio.wait_for(signal.wait(), timeout=delay)
        except asyncio.TimeoutError:
            pass
        if signal.aborted:
            return None
        agent.session.append("llm/retry-started", {"retryId": retry_id, "turn": p["turn"], "step": p["step"], "retry": n})
        return {"kind": "retry"}

    agent.hooks.register("agent/request-error", on_request_error)


def install_fallback(agent: "AgentHandle") -> None:
    opts = agent.options
    state = {"active": False}

    def on_request(p: dict[str, Any], next_: Any) -> Any:
        if state["active"]:
            config = dict(p["config"])
            config["provider"] = opts.fallback_provider or config.get("provider")
            config["model"] = opts.fallback_model or config.get("model")
            return next_({**p, "config": config})
        return next_()

    async def on_request_error(p: dict[str, Any], next_: Any) -> Any:
        if p["failure"].get("code") in FALLBACK_CODES and not state["active"] and not p["signal"].aborted:
            state["active"] = True
            agent.session.append("llm/fallback", {
                "turn": p["turn"], "step": p["step"], "failure": p["failure"],
                "from": {"provider": p.get("provider"), "model": p.get("model")},
                "to": {"provider": opts.fallback_provider or p.get("provider"),
                       "model": opts.fallback_model or p.get("model")},
            })
            return {"kind": "retry"}
        return await next_()

    agent.hooks.register("agent/request", on_request)
    agent.hooks.register("agent/request-error", on_request_error)
