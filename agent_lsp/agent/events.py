"""The agent's event vocabulary: every event it emits, one model each.

Two kinds reach `agent.subscribe(fn)`, in one stream:

- durable events (`Event` of the session log: `seq`, `time`, `type`,
  `data`), delivered after commit in seq order;
- live events (`LiveEvent`: `type`, `data`), never persisted.

The names are the wire names: `turn/start` is a `session/event` entry of type
`turn/start`, `agent/status` is the `agent/status` notification (its params
are `{sessionId, **data}`). The pydantic models below describe each `data`;
the wire schema (docs/protocol.schema.json) is generated from them, and the
agent tests check every event the loop emits against them. At run time the
loop builds plain dicts (the chunk path is hot): the models are the contract,
not a per-event validation step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agent_lsp.store.session import Event


class EventModel(BaseModel):
    """camelCase keys (as in the log and on the wire); unknown keys kept, so
    a newer writer's additions survive an older reader."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True)


@dataclass(slots=True, frozen=True)
class LiveEvent:
    """A live event: `type` is one of LIVE_EVENTS, `data` fits its model."""

    type: str
    data: dict[str, Any]


AgentEvent = Union[Event, LiveEvent]
"""What `agent.subscribe(fn)` delivers: `isinstance(e, Event)` for durable ones."""


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


# ------------------------------------------------------------------ stream chunks


class TextStart(EventModel):
    type: Literal["text-start"]


class TextDelta(EventModel):
    type: Literal["text-delta"]
    text: str


class TextEnd(EventModel):
    type: Literal["text-end"]


class ReasoningStart(EventModel):
    type: Literal["reasoning-start"]


class ReasoningDelta(EventModel):
    type: Literal["reasoning-delta"]
    text: str


class ReasoningEnd(EventModel):
    type: Literal["reasoning-end"]
    signature: str | None = None
    redacted_data: str | None = None


class ToolCallStart(EventModel):
    type: Literal["tool-call-start"]
    id: str
    name: str


class ToolCallDelta(EventModel):
    type: Literal["tool-call-delta"]
    id: str
    delta: str = Field(description="a fragment of the call's JSON arguments")


class ToolCallEnd(EventModel):
    type: Literal["tool-call-end"]
    id: str


class UsageChunk(EventModel):
    type: Literal["usage"]
    usage: Usage = Field(description="cumulative: the last one wins")


class Finish(EventModel):
    type: Literal["finish"]
    kind: Literal["stop", "tool-calls", "max-tokens", "error", "aborted"]
    failure: LlmFailure | None = None


Chunk = Union[
    TextStart, TextDelta, TextEnd, ReasoningStart, ReasoningDelta, ReasoningEnd,
    ToolCallStart, ToolCallDelta, ToolCallEnd, UsageChunk, Finish,
]


# ----------------------------------------------------------------- durable events


class InboxSpliced(EventModel):
    """A claim is a pure deletion (no `outcome`); removal and clear carry
    `outcome: "canceled"`; an insertion has no `removedCount`. Queue edits:
    `outcome: "edited"` replaces a message with its new text, `"moved"`
    reorders a list or takes a message from one list to the other."""

    target: Literal["next-turn", "next-step"]
    start: int
    removed_count: int | None = None
    inserted: list[Message]
    outcome: Literal["canceled", "edited", "moved"] | None = None


class TurnStart(EventModel):
    turn: int


class TurnEnd(EventModel):
    turn: int
    reason: TurnEndReason
    usage: UsageTotal | None = Field(default=None, description="the tokens of this turn's replies and summaries")
    session_usage: UsageTotal | None = Field(default=None, description="the session's total up to this turn's end")


class StepBoundary(EventModel):
    turn: int
    step: int


class UserMessage(EventModel):
    """`turn`/`step` are null for a compaction checkpoint between turns."""

    turn: int | None
    step: int | None
    message: Message
    surface_op: SurfaceOp
    source_event_seqs: list[int] | None = None


class RequestHeader(EventModel):
    header: RequestHeaderFields
    reason: Literal["initial", "resume", "change"]


class RequestContext(EventModel):
    provider: str
    model: str
    context_window: int | None = None
    fixed_tokens: int | None = Field(default=None, description=(
        "the system prompt and the tool schemas of the request, in tokens estimated as characters / 4"))


class AssistantChunk(EventModel):
    turn: int
    step: int
    chunk: Chunk = Field(discriminator="type")


class AssistantMessageData(EventModel):
    turn: int
    step: int
    message: AssistantMessage
    usage: Usage | None = None
    interrupted: bool | None = Field(default=None, description="the prefix kept by a mid-stream cancel")
    surface_op: SurfaceOp
    source_event_seqs: list[int]


class ToolCall(EventModel):
    turn: int
    step: int
    call_id: str
    name: str
    arguments: str = Field(description="the raw JSON text the model wrote")


class ToolResult(EventModel):
    turn: int
    step: int
    call_id: str
    name: str
    message: ToolMessage
    error: ToolError | None = None
    meta: dict[str, Any] | None = Field(default=None, description="for clients only (docs/tools.md)")
    abandoned: bool | None = None
    surface_op: SurfaceOp
    source_event_seqs: list[int]


class CompactionPrune(EventModel):
    seq: int
    tokens_before: int
    tokens_after: int


class CompactionStart(EventModel):
    compaction_id: str
    turn: int | None = Field(description="null: manual, between turns")


class CompactionSummary(EventModel):
    compaction_id: str
    summary: str
    shadowed_range: list[int]
    shadowed_seqs: list[int]
    shadowed_token_count: int
    provider: str | None = None
    model: str | None = None
    max_tokens: int | None = None
    usage: Usage | None = None


class CompactionFailure(EventModel):
    message: str
    kind: str


class CompactionEnd(EventModel):
    compaction_id: str
    turn: int | None
    error: CompactionFailure | None = None


class LlmRetry(EventModel):
    retry_id: str
    turn: int
    step: int
    retry: int
    provider: str | None = None
    mode: Literal["normal"]
    policy: Literal["transient"]
    failure: LlmFailure
    delay_ms: int


class LlmRetryStarted(EventModel):
    retry_id: str
    turn: int
    step: int
    retry: int


class LlmFallback(EventModel):
    turn: int
    step: int
    failure: LlmFailure
    from_: Route = Field(alias="from")
    to: Route


class SessionEndSeed(EventModel):
    seed_length: int


class SkippedPath(EventModel):
    path: str
    reason: str


class TurnRevert(EventModel):
    """Appended by the workspace host when `agent/turn/revert` undid (some of) a turn."""

    turn: int
    reverted: list[str]
    skipped: list[SkippedPath]


class RevertRecovered(EventModel):
    """Appended when a file revert a crash interrupted was found at the next start:
    its files all put back as before it (not recorded: it may be run again), or,
    all of them being done, its events appended just before this one."""

    operation: Literal["rewind", "turn-revert", "review-undo"]
    turn: int
    outcome: Literal["rolled-back", "completed"]
    paths: list[str] = Field(description="rolled-back: the files put back; completed: the files it reverted")
    message: str = Field(description="what was done, in words, naming the files")


class SubagentStart(EventModel):
    """Appended to the parent's log when a `subagent` tool call starts its child
    session; the call's `tool/result` meta `subagent` says how it ended."""

    turn: int
    step: int
    call_id: str
    child_session_id: str
    description: str
    agent_type: str | None = None


class HookRun(EventModel):
    """Appended by the workspace host for every user hook that ran: it allowed, blocked,
    failed, timed out or could not continue a turn (not model-visible; see docs/capabilities.md)."""

    event: str = Field(description="PreToolUse, PostToolUse, UserPromptSubmit, Stop or SessionStart")
    command: str
    source: Literal["user", "project"]
    origin: str = Field(description='"settings" or the project file the hook came from')
    outcome: Literal["allowed", "blocked", "failed", "timeout"]
    message: str = Field(description="the reason it blocked, what went wrong; for an allowed hook, empty")
    exit_code: int | None = None


class PlanItem(EventModel):
    content: str
    status: Literal["pending", "in_progress", "completed"]
    priority: Literal["high", "medium", "low"] | None = None


class PlanUpdate(EventModel):
    """The session's plan as the model last wrote it (`todo_write`): the whole list."""

    turn: int
    step: int
    call_id: str
    items: list[PlanItem]


class SessionMode(EventModel):
    """The session's permission mode changed (`agent/session/mode`)."""

    mode: Literal["default", "plan"]
    previous: Literal["default", "plan"]
    carried_plan: bool | None = Field(default=None, description="leaving plan mode: the plan was queued for the next turn")


class SessionRewind(EventModel):
    """The history was cut back to before `turn` (`agent/session/rewind`):
    the surface nodes `removedSeqs` became this node, which has no message."""

    turn: int
    surface_op: SurfaceOp
    removed_seqs: list[int]


class SessionModel(EventModel):
    """The session switched model (`agent/session/setModel`): requests from the
    next step on go to `provider`'s `model`, with `effort` when set."""

    provider: str
    model: str
    effort: str | None = None
    previous_provider: str
    previous_model: str


class SessionTitle(EventModel):
    """The session's title from now on (the listing's `title`): one the model
    wrote after the first turn (`sessions.titles = "model"`) or the user's
    (`agent/session/rename`). Not model-visible."""

    title: str
    source: Literal["model", "user"]
    model: str | None = Field(default=None, description="source model: the model that wrote it")
    usage: Usage | None = Field(default=None, description="source model: the tokens of the title request")


class InboxPaused(EventModel):
    """The next-turn queue was paused (no turn starts from it) or resumed."""

    paused: bool


class ReviewHunk(EventModel):
    hunk_id: str = Field(description='"<callId>.<n>", unique in the session')
    turn: int
    call_id: str
    old_text: str = Field(description="the whole lines the change replaced")
    new_text: str = Field(description="the whole lines it put there")
    at: int | None = Field(None, description="review/pending: the line the new lines start at, right after the change")
    context_before: str | None = Field(None, description="review/pending: up to 3 lines before them then")
    context_after: str | None = Field(None, description="review/pending: up to 3 lines after them then")


class ReviewPending(EventModel):
    """An edit landed unsaved and its hunks wait for the user ("edits.review": "review");
    `afterSha` and each hunk's place find it again after a restart."""

    turn: int
    call_id: str
    path: str
    hunks: list[ReviewHunk]
    after_sha: str | None = Field(None, description="sha256 of the file's text right after the change")


class ReviewResolve(EventModel):
    """The user kept or undid pending hunks (`agent/review/resolve`); an undo's
    `diff` is the rejected change, as the model was told."""

    action: Literal["keep", "undo"]
    path: str
    hunks: list[ReviewHunk]
    diff: str | None = None


DURABLE_EVENTS: dict[str, type[EventModel]] = {
    "agent/inbox/spliced": InboxSpliced,
    "turn/start": TurnStart,
    "turn/end": TurnEnd,
    "step/start": StepBoundary,
    "step/end": StepBoundary,
    "user/message": UserMessage,
    "request/header": RequestHeader,
    "request/context": RequestContext,
    "assistant/chunk": AssistantChunk,
    "assistant/message": AssistantMessageData,
    "tool/call": ToolCall,
    "tool/result": ToolResult,
    "compaction/prune": CompactionPrune,
    "compaction/start": CompactionStart,
    "compaction/summary": CompactionSummary,
    "compaction/end": CompactionEnd,
    "llm/retry": LlmRetry,
    "llm/retry-started": LlmRetryStarted,
    "llm/fallback": LlmFallback,
    "session/end-seed": SessionEndSeed,
    "turn/revert": TurnRevert,
    "revert/recovered": RevertRecovered,
    "subagent/start": SubagentStart,
    "hook/run": HookRun,
    "plan/update": PlanUpdate,
    "session/mode": SessionMode,
    "session/rewind": SessionRewind,
    "agent/inbox/paused": InboxPaused,
    "review/pending": ReviewPending,
    "review/resolve": ReviewResolve,
    "session/model": SessionModel,
    "session/title": SessionTitle,
}


# -------------------------------------------------------------------- live events


class Status(EventModel):
    status: Literal["idle", "running"]


class InboxInserted(EventModel):
    target: Literal["next-turn", "next-step"]
    message: Message


class InboxDiscarded(EventModel):
    """A queued message removed (agent/inbox/remove) or cleared by a cancel."""

    target: Literal["next-turn", "next-step"]
    message: Message


class InboxChanged(EventModel):
    """After a queue edit (update, move, pause): both lists as they are now."""

    next_turn: list[Message]
    next_step: list[Message]
    paused: bool


class InboxClaimed(EventModel):
    message: Message
    turn: int


class AgentError(EventModel):
    """Before the durable `turn/end error`; `step` is null for a failed idle
    flush (`code: PERSISTENCE`)."""

    turn: int | None = None
    step: int | None = None
    error: LlmFailure


class ToolProgress(EventModel):
    """From `ctx.progress(data)` in a tool body, e.g. `{stream: "stdout", text}`."""

    call_id: str
    data: dict[str, Any]


class AgentRef(EventModel):
    agent_id: str
    session_id: str


class SessionStart(EventModel):
    source: Literal["startup", "resume", "clear", "compact"]
    session_id: str
    compaction_id: str | None = None


class ToolResultLive(EventModel):
    """After the durable `tool/result`: the tool's ToolOutput object itself."""

    call_id: str
    name: str
    output: Any
    data: ToolResult


class SubagentStatus(EventModel):
    """A parent's sub-agent started (`running`) or ended; `usage` (summed over the
    child's model calls) comes with the end."""

    call_id: str
    child_session_id: str
    description: str
    agent_type: str | None = None
    status: Literal["running", "completed", "cancelled", "failed"]
    usage: Usage | None = None


LIVE_EVENTS: dict[str, type[EventModel]] = {
    "agent/created": AgentRef,
    "agent/session-start": SessionStart,
    "agent/status": Status,
    "agent/inbox/inserted": InboxInserted,
    "agent/inbox/discarded": InboxDiscarded,
    "agent/inbox/claimed": InboxClaimed,
    "agent/inbox/changed": InboxChanged,
    "agent/error": AgentError,
    "agent/tool/progress": ToolProgress,
    "agent/tool/result": ToolResultLive,
    "agent/disposed": AgentRef,
    "agent/subagent/status": SubagentStatus,
}

# The live events a client is sent (as notifications of the same name).
CLIENT_LIVE_EVENTS = (
    "agent/status", "agent/inbox/inserted", "agent/inbox/discarded", "agent/inbox/claimed",
    "agent/inbox/changed", "agent/error", "agent/tool/progress", "agent/subagent/status",
)


def complete_failure(data: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of a failure with `code` and `message` filled in where missing:
    every failure the loop reports carries both."""
    out = dict(data or {})
    out.setdefault("code", "UNKNOWN")
    if not out.get("message"):
        out["message"] = out["code"]
    return out


def only(type: str, fn: Callable[[dict[str, Any]], Any]) -> Callable[[AgentEvent], None]:
    """A subscriber that hands `fn` the data of the events of one type:
    `agent.subscribe(only("agent/status", lambda data: ...))`."""

    def deliver(event: AgentEvent) -> None:
        if event.type == type:
            fn(event.data)

    return deliver
