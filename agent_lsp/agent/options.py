"""Agent options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


@dataclass
class RetryOptions:
    """Transient-failure retry (R9.4): up to `max_retries` per step,
    exponential backoff from `base_delay_s` to `max_delay_s`, +-`jitter`."""

    enabled: bool = True
    max_retries: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 10.0
    jitter: float = 0.1


@dataclass
class CompactionOptions:
    """Context compaction (R10)."""

    enabled: bool = True
    context_window: int | None = None  # overrides the provider's model info
    threshold_ratio: float = 0.8
    retain_ratio: float = 0.16
    retain_tokens: int | None = None
    compaction_retries: int = 1
    max_overflow_retries: int = 1
    prune: bool = True
    prune_threshold_chars: int = 8192
    prune_head_chars: int = 4096
    prune_tail_chars: int = 1024
    summary_provider: str | None = None  # default: the routed provider/model
    summary_model: str | None = None
    summary_max_tokens: int | None = None
    # The images of the last this-many user messages are sent to the model; older
    # ones are a short note in the request (agent/image_data.py). None: all of them.
    image_turns: int | None = 3


@dataclass
class AgentOptions:
    provider: str
    model: str
    reasoning_effort: str | None = None  # sent as the request option `reasoningEffort` when set
    system_prompt: str | Callable[[], str] = ""
    max_tokens: int | None = None
    temperature: float | None = None
    max_parallel_tool_calls: int = 10
    cancel_grace_s: float = 2.0  # a tool ignoring cancellation is abandoned after this
    retry: RetryOptions = field(default_factory=RetryOptions)
    compaction: CompactionOptions = field(default_factory=CompactionOptions)
    fallback_provider: str | None = None  # used when the primary reports MODEL_UNAVAILABLE
    fallback_model: str | None = None
    # Dynamic context (open files, cursor, git state) rendered at each step
    # proposal; entered as a user message (source "runtime-context") only when
    # it differs from the last snapshot still in model history (R4.5).
    # Keeps the system prompt stable, so provider prompt caches keep hitting.
    runtime_context: Callable[[], str | None] | None = None
    # (model, usage) -> estimated cost in USD, None when the model's price is
    # unknown; `turn/end` records each turn's and the session's usage with it.
    cost_estimate: Callable[[str, Mapping[str, Any]], float | None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.max_parallel_tool_calls, int) or self.max_parallel_tool_calls < 1:
            raise ValueError("max_parallel_tool_calls must be a positive integer")
