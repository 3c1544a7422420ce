"""The shapes the agent's events are made of: `EventModel` (camelCase keys,
unknown keys kept) and the message, usage, failure, cause and tool types that
durable and live events share (agent/events.py describes the stream)."""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class EventModel(BaseModel):
    """camelCase keys (as in the log and on the wire); unknown keys kept, so
    a newer writer's additions survive an older reader."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True)


# ------------------------------------------------------------------ shared shapes


class Block(EventModel):
    """A content block: text, reasoning (`signature`/`redactedData` optional) or
    tool-call (`id`, `name`, raw JSON `arguments`)."""

    type: str
    text: str | None = None
    signature: str | None = None
    redacted_data: str | None = None
    id: str | None = None
    name: str | None = None
    arguments: str | None = None


class MessageNote(EventModel):
    """What a client shows for a message whose content is meant for the model:
    `undo` ("↶ you undid a change in stats.py"), `skill` ("/greet" and what the
    user added)."""

    kind: Literal["undo", "skill"]
    text: str


class Message(EventModel):
    """A user-role message (inbox, `user/message`). `delivery` says how it was
    sent (a followup has none); `context` is what the user attached, verbatim."""

    role: Literal["user"] = "user"
    id: str
    source: str = Field(description='"user" by default; the loop\'s own: tool, plugin, runtime-context, compaction')
    content: list[Block]
    context: list[dict[str, Any]] | None = None
    delivery: Literal["steer", "inject"] | None = None
    compaction_id: str | None = None
    note: MessageNote | None = Field(default=None, description=(
        "the message's content is for the model, not the user's words: clients show this note instead"))


class AssistantMessage(EventModel):
    role: Literal["assistant"] = "assistant"
    content: list[Block]
    provider: str | None = None
    model: str | None = None


class ToolMessage(EventModel):
    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    content: list[Block]
    is_error: bool


class Usage(EventModel):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


class UsageTotal(EventModel):
    """Tokens summed over replies (a turn's, a session's), with their cost
    estimated from the price table. `costUsd` is absent when no reply had a
    known price; `unpricedModels` names the models whose tokens it leaves out."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: float | None = Field(default=None, description="an estimate, from list prices")
    unpriced_models: list[str] | None = None


class LlmFailure(EventModel):
    """A model failure: one canonical `code` (RATE_LIMIT, OVERLOADED, TIMEOUT,
    CONTEXT_WINDOW_EXCEEDED, AUTH, MODEL_UNAVAILABLE, ABORTED, UNKNOWN, ...)."""

    code: str
    message: str
    status: int | None = None
    provider_retry_after_ms: int | None = None
    request_id: str | None = None
    provider: str | None = None
    model: str | None = None
    retryable: bool | None = Field(default=None, description="false: the same request again cannot help")
    phase: Literal["connect"] | None = Field(default=None, description="connect: no connection was made (refused, unknown host)")
    url: str | None = Field(default=None, description="the endpoint asked")
    setting: str | None = Field(
        default=None, description="the env var or settings key to change, e.g. OPENAI_BASE_URL, model.baseUrl, model.apiKey")


class Cause(EventModel):
    kind: Literal["user", "parent", "hook", "disposed", "legacy"]
    reason: str | None = Field(default=None, description="kind hook only")


class TurnEndReason(EventModel):
    """completed | max-tokens | blocked (`message`?) | aborted (`reason`) |
    error (`error`) | interrupted (crash repair)."""

    kind: Literal["completed", "max-tokens", "blocked", "aborted", "error", "interrupted"]
    message: str | None = None
    reason: Cause | None = None
    error: LlmFailure | None = None


class ReplaceOp(EventModel):
    """Positional: the surface nodes from seq `start` to seq `end` become this event."""

    kind: Literal["replace"]
    start: int
    end: int


SurfaceOp = Union[Literal["append"], ReplaceOp]


class ToolSpec(EventModel):
    name: str
    description: str | None = None
    input_schema: dict[str, Any] | None = None


class RequestHeaderFields(EventModel):
    provider: str
    model: str
    system: str
    tools: list[ToolSpec]
    workspace: str | None = Field(default=None, description=(
        "the folder's part of the fixed prompt (its roots and project instructions), sent as the first message"))
    max_tokens: int | None = None
    temperature: float | None = None


class Route(EventModel):
    provider: str | None = None
    model: str | None = None


class ToolError(EventModel):
    name: str | None = None
    code: str
    message: str
