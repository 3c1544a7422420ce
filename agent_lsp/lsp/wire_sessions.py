"""The wire models of a session's requests: messages and the inbox, the listing,
load and replay (with the typed durable events), history (revert, rewind, fork)."""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, GetJsonSchemaHandler, TypeAdapter, create_model
from pydantic.json_schema import JsonSchemaValue

from agent_lsp.agent import durable_events, event_shapes
from agent_lsp.lsp.wire_base import Content, ContextItem, WireModel
from agent_lsp.service.session_list import SessionInfo  # noqa: F401 (the wire's, built by the service for both faces)


def _event_envelope(type_name: str, data: type[BaseModel]) -> type[BaseModel]:
    """`turn/start` -> TurnStartEvent {seq, time, type: "turn/start", data: TurnStart, lastSeq?}."""
    name = "".join(part[:1].upper() + part[1:] for part in re.split(r"[/-]", type_name)) + "Event"
    return create_model(
        name,
        __base__=WireModel,
        __doc__=f"A durable `{type_name}` event.",
        seq=(int, ...),
        time=(int, Field(description="epoch milliseconds")),
        type=(Literal[type_name], ...),  # type: ignore[valid-type]
        data=(data, ...),
        last_seq=(int | None, Field(default=None, description="a coalesced assistant/chunk: it covers seq..lastSeq")),
    )


@functools.cache
def typed_event() -> Any:
    """Every durable event type with its own typed `data`, discriminated on
    `type`: what the schema says `Event` is (built on first use, not at import:
    the server never validates the events it sends)."""
    envelopes = tuple(_event_envelope(t, m) for t, m in durable_events.DURABLE_EVENTS.items())
    return Annotated[Union[envelopes], Field(discriminator="type")]  # type: ignore[valid-type]


class Event(WireModel):
    """One durable session event; its `type` names its `data` model (agent_lsp/agent/durable_events.py).

    `lastSeq` is present only on a coalesced `assistant/chunk`: consecutive text (or
    reasoning) deltas of one step merged into one event under load; it covers the
    events `seq..lastSeq` and its `data.chunk.text` is their concatenation. The
    server does not validate the events it sends (they come from the log): the
    schema is the typed union of every known event type; clients ignore a type
    they do not know (plugins may add some)."""

    seq: int
    time: int = Field(description="epoch milliseconds")
    type: str
    data: dict[str, Any]
    last_seq: int | None = None

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(TypeAdapter(typed_event()).core_schema)


Message = event_shapes.Message  # an inbox message (a user-role message with an id), as the agent holds it


class FollowupParams(WireModel):
    session_id: str | None = Field(
        default=None, description="no sessionId: a new session in workspaceUri's folder (or the first folder)"
    )
    content: Content
    context: list[ContextItem] | None = None
    workspace_uri: str | None = None


class MessageRef(WireModel):
    """Result of agent/followup and agent/steer: answered at once, the turn runs on."""

    session_id: str
    message_id: str


class SteerParams(WireModel):
    session_id: str
    content: Content
    context: list[ContextItem] | None = None


class CancelParams(WireModel):
    session_id: str
    keep_inbox: bool = False


class InboxRemoveParams(WireModel):
    session_id: str
    message_id: str


class InboxRemoveResult(WireModel):
    removed: bool


class WorktreeRequest(WireModel):
    base: str | None = Field(default=None, description="the branch, tag or commit the worktree starts from (no "
                             "base: the folder's `HEAD`)")


class SessionNewParams(WireModel):
    workspace_uri: str | None = None
    title: str | None = None
    worktree: WorktreeRequest | bool | None = Field(
        default=None, description="`true` or `{base?}`: the session works in a new git worktree of the folder's "
        "repository, on a new branch `agent/<key>`, outside the repository; a folder outside a git repository "
        "is refused with -32602")


class SessionRef(WireModel):
    session_id: str


class SessionListParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: every open workspace")
    query: str | None = Field(
        default=None, description="only sessions with every word of this in their title or the text of their user "
        "and assistant messages (any case)")
    updated_after: int | None = Field(default=None, description="only sessions updated at or after this epoch ms")
    updated_before: int | None = Field(default=None, description="only sessions updated before this epoch ms")
    limit: int | None = Field(default=None, ge=1, description="at most this many (the most recently updated)")


class SessionListResult(WireModel):
    sessions: list[SessionInfo]


class SessionRenameParams(SessionRef):
    title: str = Field(description="the session's title from now on (whitespace collapsed; 1 to 200 characters)")


class SessionRenameResult(WireModel):
    title: str = Field(description="the title as recorded (a `session/title` event)")


class Inbox(WireModel):
    next_turn: list[Message]
    next_step: list[Message]


class SessionLoadResult(WireModel):
    """Everything a client needs to redraw a session: its durable events and its inbox."""

    session_id: str
    workspace_uri: str
    status: Literal["idle", "running"]
    events: list[Event]
    inbox: Inbox
    held_by_pid: int | None = Field(
        default=None,
        description="set when another agent-lsp process has the session open: this answer is a read-only "
        "snapshot from disk (no live events follow; requests that change the session fail with -32010)",
    )
    problem: str | None = Field(
        default=None, description="set when the session's file is damaged: what is wrong, naming the file and the line; "
        "`events` are those before the damage, read from disk (no live events follow; requests that change the session fail with -32012)")


class SessionReplayParams(SessionRef):
    """One page of a session's transcript: `forward` from `seq` (default 0), or
    `backward`, ending just before `seq` (default: the newest page)."""

    direction: Literal["forward", "backward"] = "forward"
    seq: int | None = Field(default=None, ge=0)
    limit: int = Field(default=200, ge=1, le=1000, description="at most this many events (after merging)")


class SessionReplayResult(WireModel):
    """A page of the log, `startSeq..nextSeq-1`, runs of text (or reasoning) deltas
    merged into one `assistant/chunk` with `lastSeq`; `endSeq` is the length of the
    log when answered (the seq the next live event gets)."""

    session_id: str
    workspace_uri: str
    status: Literal["idle", "running"]
    events: list[Event]
    start_seq: int
    next_seq: int
    end_seq: int
    inbox: Inbox
    held_by_pid: int | None = Field(
        default=None,
        description="set when another agent-lsp process has the session open: a read-only page from disk",
    )
    problem: str | None = Field(
        default=None, description="set when the session's file is damaged: what is wrong, naming the file and the line; "
        "the page is of the events before the damage, read-only")


class SessionDeleteParams(SessionRef):
    force: bool = Field(default=False, description="a worktree session: delete its worktree and branch even when "
                        "they hold changes not landed in the main checkout (without it, refused with -32602)")


class SessionDeleteResult(WireModel):
    deleted: bool


class SessionCompactResult(WireModel):
    compacted: bool


class TurnRevertParams(WireModel):
    session_id: str
    turn: int = Field(ge=1)


SkippedPath = durable_events.SkippedPath


class TurnRevertResult(WireModel):
    reverted: list[str]
    skipped: list[SkippedPath]


class SessionRewindParams(WireModel):
    session_id: str
    turn: int = Field(ge=1, description="the history is cut back to before this turn")
    revert_files: bool = Field(default=False, description="also revert the files the rewound turns changed")


class TurnRevertReport(WireModel):
    turn: int
    reverted: list[str]
    skipped: list[SkippedPath]


class SessionRewindResult(WireModel):
    removed_messages: int = Field(description="how many history entries the model no longer sees")
    reverts: list[TurnRevertReport] = Field(description="with revertFiles: per rewound turn, newest first")


class SessionForkParams(WireModel):
    session_id: str
    turn: int = Field(ge=1, description="the new session shares the history up to the end of this turn")


class InboxUpdateParams(WireModel):
    session_id: str
    message_id: str
    content: Content


class InboxUpdateResult(WireModel):
    updated: bool


class InboxMoveParams(WireModel):
    session_id: str
    message_id: str
    to: Literal["next-turn", "next-step", "now"] = Field(
        description="next-turn: the queue (at `index`); next-step: steer the running turn now; "
        "now: cancel the running turn and start this message's turn"
    )
    index: int | None = Field(default=None, ge=0, description="position in the next-turn queue; default: its end")


class InboxMoveResult(WireModel):
    moved: bool


class InboxPauseParams(WireModel):
    session_id: str
    paused: bool


class InboxPauseResult(WireModel):
    paused: bool
