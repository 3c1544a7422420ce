"""The durable events of a session log, one model each, and `DURABLE_EVENTS`
(the table from type to model the wire schema is generated from)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agent_lsp.agent.event_shapes import (
    AssistantMessage, EventModel, LlmFailure, Message, RequestHeaderFields, Route, SurfaceOp, ToolError, ToolMessage,
    TurnEndReason, Usage, UsageTotal,
)
from agent_lsp.agent.stream_chunks import Chunk


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
