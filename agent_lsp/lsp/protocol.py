"""The agent_lsp wire protocol v1: every custom message as a pydantic model.

This module is the contract the editor clients test against. Keys on the wire
are camelCase (aliases); models are dumped with `wire_dump()` (by alias, no
None-valued optional fields). `docs/protocol.schema.json` is generated from
the method table below by `lsp/protocol_gen.py`:

    python -m agent_lsp.lsp.protocol_gen --schema > docs/protocol.schema.json

and a test fails when the committed file and these models differ.

Methods are grouped by direction:
- client -> server requests (`agent/followup`, `agent/session/*`, ...),
- server -> client notifications (`session/event`, `agent/status`, ...),
- server -> client requests (`agent/permission`, `agent/saveDocuments`, `agent/languageQuery`).
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, TypeAdapter, create_model
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue

from agent_lsp.agent import events
from agent_lsp.lsp import capabilities
from agent_lsp.lsp.wire_base import (  # noqa: F401 (re-exported: the wire models' users import them from here)
    Position, Range, WireModel, describe_validation_error, wire_dump,
)
from agent_lsp.lsp.wire_images import ImageBlock, SessionFileParams, SessionFileResult
from agent_lsp.lsp.wire_language import (
    LanguageQueryParams,
    LanguageQueryResult,
    LanguageServerStatus,  # noqa: F401 (the features build it from here)
    LanguageStatusParams,
    LanguageStatusResult,
)

PROTOCOL_VERSION = 1

# JSON-RPC error code: the session is open in another agent-lsp process (another
# editor window on the same folder); error data: {sessionId, pid}.
SESSION_IN_USE_CODE = -32010
# JSON-RPC error: the session's file is damaged where nothing of it can be shown
# (no header), or a request would change a damaged session; error data:
# {sessionId, file, line} (the file's name, not its directory).
SESSION_DAMAGED_CODE = -32012

# The protocol's constants, in the schema too: the clients' constants are
# generated from it (editors/vscode/src/protocol.generated.ts,
# editors/neovim/lua/agent_lsp/protocol.lua).
CONSTANTS: dict[str, tuple[int, str]] = {
    "PROTOCOL_VERSION": (PROTOCOL_VERSION, "the version of this protocol"),
    "SESSION_IN_USE_CODE": (
        SESSION_IN_USE_CODE,
        "JSON-RPC error: the session is open in another agent-lsp process; data {sessionId, pid}",
    ),
    "SESSION_DAMAGED_CODE": (
        SESSION_DAMAGED_CODE,
        "JSON-RPC error: the session's file is damaged (nothing readable, or a change asked of it); data {sessionId, file, line}",
    ),
}


# ----------------------------------------------------------------- shared pieces


class ContentBlock(WireModel):
    """A content block of a user message (the blocks of llm/types.py); `text` for text blocks."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True)
    type: str
    text: str | None = None


Content = Union[str, list[Annotated[Union[ImageBlock, ContentBlock], Field(union_mode="left_to_right")]]]


class ContextItem(WireModel):
    """Something the user attached to a message: a file, a selection, a diagnostic,
    or an MCP server's resource (`@server:uri` in the text, see docs/mcp.md)."""

    kind: Literal["file", "selection", "diagnostic", "mcp-resource"]
    uri: str
    range: Range | None = None
    text: str | None = None
    message: str | None = Field(default=None, description="the diagnostic's message")
    server: str | None = Field(default=None, description="mcp-resource: the MCP server it was read from")
    note: str | None = Field(default=None, description="mcp-resource: why it could not be attached, or that it was cut")


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
    envelopes = tuple(_event_envelope(t, m) for t, m in events.DURABLE_EVENTS.items())
    return Annotated[Union[envelopes], Field(discriminator="type")]  # type: ignore[valid-type]


class Event(WireModel):
    """One durable session event; its `type` names its `data` model (agent_lsp/agent/events.py).

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


Message = events.Message  # an inbox message (a user-role message with an id), as the agent holds it


class Empty(WireModel):
    pass


# --------------------------------------------------------- client -> server requests


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


class SessionNewParams(WireModel):
    workspace_uri: str | None = None
    title: str | None = None


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


class SessionInfo(WireModel):
    session_id: str
    workspace_uri: str
    title: str | None = None
    created_at: int = Field(description="epoch milliseconds")
    updated_at: int = Field(description="epoch milliseconds")
    turns: int
    status: Literal["idle", "running"]
    parent_session_id: str | None = Field(
        default=None, description="a fork: the session it was forked from; a sub-agent's child session: the session that ran it")
    fork_turn: int | None = Field(default=None, description="a fork: the parent's last turn it shares")
    usage: events.UsageTotal | None = Field(default=None, description="tokens and estimated cost up to the last turn's end")
    parent_tool_call_id: str | None = Field(
        default=None, description="a sub-agent's child session: the parent's `subagent` tool call that ran it")
    excerpt: str | None = Field(
        default=None, description="listed for a `query`: the message text around a word of it (absent when only "
        "the title has the words)")
    problem: str | None = Field(
        default=None, description="set when the session's file is damaged: what is wrong, naming the file and the line; "
        "loading it shows the events before the damage, read-only")


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


class SessionDeleteResult(WireModel):
    deleted: bool


class SessionCompactResult(WireModel):
    compacted: bool


class TurnRevertParams(WireModel):
    session_id: str
    turn: int = Field(ge=1)


SkippedPath = events.SkippedPath


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


# ---------------------------------------------------- server -> client notifications


class SessionEventParams(WireModel):
    """One or more consecutive durable events of a session, in seq order."""

    session_id: str
    events: list[Event]


class StatusParams(events.Status):
    session_id: str


class InboxInsertedParams(events.InboxInserted):
    session_id: str


class InboxDiscardedParams(events.InboxDiscarded):
    session_id: str


class InboxClaimedParams(events.InboxClaimed):
    session_id: str


class InboxChangedParams(events.InboxChanged):
    session_id: str


class AgentErrorParams(events.AgentError):
    session_id: str


class ToolProgressParams(events.ToolProgress):
    session_id: str


class SubagentStatusParams(events.SubagentStatus):
    session_id: str = Field(description="the parent session")


# ------------------------------------------------------- server -> client requests


class PermissionParams(WireModel):
    session_id: str | None = None
    tool: str
    kind: Literal["command", "read", "write", "delete"]
    title: str
    detail: str | None = None
    command: str | None = None
    path: str | None = None
    choices: list[Literal["once", "session", "always", "deny"]] = Field(
        default=["once", "session", "always", "deny"],
        description="the answers the server honours; show only these (a command it always confirms has once and deny)",
    )
    asks_every_time: str | None = Field(default=None, description="why this is asked every time, for the user")
    diff: str | None = Field(default=None, description='an edit waiting for approval ("edits.review": "ask"): its unified diff')


class PermissionResult(WireModel):
    answer: Literal["once", "session", "always", "deny"]


class SaveDocumentsParams(WireModel):
    uris: list[str]


class ApplyEditAgentLsp(WireModel):
    """The `agentLsp` member of every agent edit's `workspace/applyEdit` params, for
    a client that declared `saveDocuments` (others may refuse an unknown member)."""

    review: Literal["apply", "review", "ask"] = Field(description=(
        'the effective "edits.review" setting of the edited files\' folder, however it was set, as the edit '
        'was made under it (read once per edit: the server holds or saves the edit by the same mode); "review": '
        "the edit waits unsaved for the user, so the client does not save it (the server sends "
        'agent/saveDocuments once it is to be saved); the undo of a pending hunk is always "review"'))


# ----------------------------------------------------- capabilities, commands, settings


class AgentLspClientCapabilities(WireModel):
    """`initialize.capabilities.experimental.agentLsp`."""

    permissions: bool = False
    save_documents: bool = False
    events: bool = False
    elicitation: bool = Field(default=False, description="the client answers agent/elicit (MCP servers' questions)")
    language_query: bool = Field(default=False, description="the client answers agent/languageQuery from its own "
                                 "language servers")


class FollowupCommandArgs(WireModel):
    """The object form of the `agentLsp.followup` / `agentLsp.steer` command argument."""

    content: Content
    session_id: str | None = None
    context: list[ContextItem] | None = None
    workspace_uri: str | None = None


# ------------------------------------------------------------------ MCP servers


class McpListParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: every open workspace")


class McpServerStatus(WireModel):
    workspace_uri: str
    name: str
    transport: Literal["stdio", "http"] | None = Field(default=None, description="absent for a bad configuration entry")
    source: Literal["user", "project", "editor"] = Field(description="config.toml, .mcp.json, or the editor's settings")
    state: Literal["stopped", "starting", "ready", "failed", "needs-authorization"]
    tool_count: int = 0
    tools: list[str] = Field(default_factory=list, description="the server's own tool names, when ready")
    restarts: int = 0
    reason: str | None = Field(default=None, description="why it failed, is restarting or waits")
    protocol_version: str | None = None
    authorization: Literal["trust", "oauth"] | None = Field(
        default=None, description="what agent/mcp/authorize does: ask to trust this .mcp.json server again, or sign in with OAuth")
    signed_in: bool | None = Field(default=None, description="oauth: tokens are stored for it")


class McpListResult(WireModel):
    servers: list[McpServerStatus]


class McpServerParams(WireModel):
    """One MCP server by its configured name, in a folder (no workspaceUri: the first folder that has it)."""

    server: str
    workspace_uri: str | None = None


class McpPromptsParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: every open workspace")


class McpPromptArgument(WireModel):
    name: str
    description: str | None = None
    required: bool = False


class McpPromptInfo(WireModel):
    workspace_uri: str
    server: str
    name: str
    description: str | None = None
    arguments: list[McpPromptArgument] = Field(default_factory=list)


class McpPromptsResult(WireModel):
    prompts: list[McpPromptInfo]


class McpPromptRunParams(WireModel):
    """Run an MCP server's prompt as the user: its messages enter as a followup."""

    server: str
    name: str
    arguments: dict[str, str] | None = None
    session_id: str | None = Field(default=None, description="no sessionId: a new session of the workspace")
    workspace_uri: str | None = None


class ElicitParams(WireModel):
    """An MCP server asks the user for input (its `elicitation/create`)."""

    session_id: str | None = Field(default=None, description="the session whose tool call the question belongs to, when known")
    server: str
    message: str
    requested_schema: dict[str, Any] = Field(
        description="a flat JSON Schema object: properties of type string, number, integer, boolean, or enum strings"
    )


class ElicitResult(WireModel):
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = Field(default=None, description="accept: the answers by property name")


# ------------------------------------------------------------------ sub-agents


class SubagentCancelParams(WireModel):
    session_id: str = Field(description="the sub-agent's own session (childSessionId)")


class SubagentCancelResult(WireModel):
    cancelled: bool


# ------------------------------------------------------------- permission modes


class SessionModeParams(WireModel):
    session_id: str
    mode: Literal["default", "plan"]
    carry_plan: bool = Field(default=True, description="leaving plan mode: queue the plan for the next turn")


class SessionModeResult(WireModel):
    mode: Literal["default", "plan"]
    previous: Literal["default", "plan"]


# ----------------------------------------------------------------------- models


class SessionSetModelParams(WireModel):
    session_id: str
    provider: str | None = Field(default=None, description='"openai", "anthropic" or "scripted"; default: the session\'s')
    model: str = Field(min_length=1)
    effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        default=None, description="reasoning effort (OpenAI-compatible endpoints); none: the endpoint's default")


class SessionSetModelResult(WireModel):
    provider: str
    model: str
    effort: str | None = None
    previous_provider: str
    previous_model: str


class ModelListParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: the first workspace")


class ModelChoice(WireModel):
    provider: str
    model: str
    source: Literal["configured", "endpoint"] = Field(description="the settings, or the endpoint's model list")
    context_window: int | None = Field(default=None, description="tokens, when configured or well known")


class ModelListResult(WireModel):
    models: list[ModelChoice]
    note: str | None = Field(default=None, description="why the endpoint's models are missing, when they are")


class ModelInfoParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: the first folder")


class ModelInfoResult(WireModel):
    provider: str = Field(description="openai | anthropic | scripted")
    model: str
    reason: str = Field(description="why this provider: configured, an environment variable, or what auto found")
    demo: bool = Field(description="nothing is configured: the built-in scripted demo model answers")


# ----------------------------------------------------------------------- skills


class SkillListParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: every open workspace")


class SkillInfo(WireModel):
    workspace_uri: str
    name: str
    description: str
    source: Literal["user", "project"] = Field(description="the user's skills folder or the workspace's")
    path: str = Field(description="the skill's SKILL.md")


class SkillListResult(WireModel):
    skills: list[SkillInfo]


class SkillRunParams(WireModel):
    """Invoke a skill as the user: its instructions (and `arguments`) enter as a followup."""

    name: str
    arguments: str | None = Field(default=None, description="what the user adds, e.g. the text after /name")
    session_id: str | None = Field(default=None, description="no sessionId: the workspace's current session")
    workspace_uri: str | None = None


# ------------------------------------------------------------ permission rules


class PermissionRulesParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: every open workspace")


class PermissionRuleInfo(WireModel):
    id: str = Field(description="names the rule for agent/permission/revoke")
    workspace_uri: str
    tool: str = Field(description='a tool name, "*" for any, or a prefix ending in "*"')
    action: Literal["allow", "ask", "deny"]
    command_prefix: str | None = None
    path_glob: str | None = Field(default=None, description="workspace-relative")
    scope: Literal["session", "workspace", "settings", "policy"] = Field(
        description='session and workspace: remembered answers ("Allow for session", "Always allow"), revocable; '
                    "settings and policy: written in the settings or the managed policy")
    source: str = Field(description="for the user: the file or the session that holds it")
    session_id: str | None = Field(default=None, description="scope session only")
    revocable: bool


class PermissionRulesResult(WireModel):
    rules: list[PermissionRuleInfo]


class PermissionRevokeParams(WireModel):
    id: str
    workspace_uri: str | None = Field(default=None, description="the rule's workspace; no workspaceUri: the first folder")


# ------------------------------------------------------------------ model check


class ModelCheckParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: the first folder")


class ModelCheckResult(WireModel):
    ok: bool
    provider: str | None = None
    model: str | None = None
    url: str | None = Field(default=None, description="the endpoint asked; absent for the scripted model")
    description: str | None = Field(default=None, description="which model is configured and why (no secrets)")
    latency_ms: int | None = Field(default=None, description="until the first streamed chunk")
    error: events.LlmFailure | None = None
# ----------------------------------------------------------------- edit review


class PendingHunkInfo(WireModel):
    """An agent edit's hunk waiting for the user ("edits.review": "review"), where it is now."""

    session_id: str
    hunk_id: str
    uri: str
    range: Range = Field(description="its whole lines in the buffer as it is now (character 0 to character 0 of "
                         "the line after; start = end: lines were deleted there)")
    turn: int
    call_id: str
    old_text: str = Field(description="what undo puts back")
    new_text: str


class ReviewListParams(WireModel):
    session_id: str | None = Field(default=None, description="no sessionId: every session's")
    uri: str | None = Field(default=None, description="only this document's")


class ReviewListResult(WireModel):
    hunks: list[PendingHunkInfo]


class ReviewResolveParams(WireModel):
    """Keep or undo one hunk (`hunkId`), a document's (`uri`) or all of a session's (`all: true`)."""

    session_id: str
    action: Literal["keep", "undo"]
    hunk_id: str | None = None
    uri: str | None = None
    all: bool = False


class ReviewSkip(WireModel):
    hunk_id: str
    reason: str


class ReviewResolveResult(WireModel):
    resolved: list[str] = Field(description="the hunk ids kept or undone")
    skipped: list[ReviewSkip]


# ------------------------------------------------------------------ the method table

CLIENT_REQUESTS: dict[str, tuple[type[WireModel], type[WireModel]]] = {
    "agent/followup": (FollowupParams, MessageRef),
    "agent/steer": (SteerParams, MessageRef),
    "agent/cancel": (CancelParams, Empty),
    "agent/inbox/remove": (InboxRemoveParams, InboxRemoveResult),
    "agent/session/new": (SessionNewParams, SessionRef),
    "agent/session/list": (SessionListParams, SessionListResult),
    "agent/session/load": (SessionRef, SessionLoadResult),
    "agent/session/replay": (SessionReplayParams, SessionReplayResult),
    "agent/session/delete": (SessionRef, SessionDeleteResult),
    "agent/session/rename": (SessionRenameParams, SessionRenameResult),
    "agent/session/file": (SessionFileParams, SessionFileResult),
    "agent/session/compact": (SessionRef, SessionCompactResult),
    "agent/turn/revert": (TurnRevertParams, TurnRevertResult),
    "agent/session/rewind": (SessionRewindParams, SessionRewindResult),
    "agent/session/fork": (SessionForkParams, SessionRef),
    "agent/inbox/update": (InboxUpdateParams, InboxUpdateResult),
    "agent/inbox/move": (InboxMoveParams, InboxMoveResult),
    "agent/inbox/pause": (InboxPauseParams, InboxPauseResult),
    "agent/mcp/list": (McpListParams, McpListResult),
    "agent/mcp/prompts": (McpPromptsParams, McpPromptsResult),
    "agent/mcp/prompt/run": (McpPromptRunParams, MessageRef),
    "agent/mcp/authorize": (McpServerParams, McpServerStatus),
    "agent/mcp/logout": (McpServerParams, McpServerStatus),
    "agent/subagent/cancel": (SubagentCancelParams, SubagentCancelResult),
    "agent/session/mode": (SessionModeParams, SessionModeResult),
    "agent/session/setModel": (SessionSetModelParams, SessionSetModelResult),
    "agent/model/list": (ModelListParams, ModelListResult),
    "agent/skill/list": (SkillListParams, SkillListResult),
    "agent/model/info": (ModelInfoParams, ModelInfoResult),
    "agent/skill/run": (SkillRunParams, MessageRef),
    "agent/permission/rules": (PermissionRulesParams, PermissionRulesResult),
    "agent/permission/revoke": (PermissionRevokeParams, PermissionRulesResult),
    "agent/model/check": (ModelCheckParams, ModelCheckResult),
    "agent/review/list": (ReviewListParams, ReviewListResult),
    "agent/review/resolve": (ReviewResolveParams, ReviewResolveResult),
    "agent/language/status": (LanguageStatusParams, LanguageStatusResult),
}

SERVER_NOTIFICATIONS: dict[str, type[WireModel]] = {
    "session/event": SessionEventParams,
    "agent/status": StatusParams,
    "agent/inbox/inserted": InboxInsertedParams,
    "agent/inbox/discarded": InboxDiscardedParams,
    "agent/inbox/claimed": InboxClaimedParams,
    "agent/inbox/changed": InboxChangedParams,
    "agent/error": AgentErrorParams,
    "agent/tool/progress": ToolProgressParams,
    "agent/subagent/status": SubagentStatusParams,
}

SERVER_REQUESTS: dict[str, tuple[type[WireModel], type[WireModel]]] = {
    "agent/permission": (PermissionParams, PermissionResult),
    "agent/saveDocuments": (SaveDocumentsParams, Empty),
    "agent/elicit": (ElicitParams, ElicitResult),
    "agent/languageQuery": (LanguageQueryParams, LanguageQueryResult),
}

COMMANDS = {
    capabilities.FOLLOWUP: "args: [text] or [FollowupCommandArgs]; result MessageRef",
    capabilities.STEER: "args: [text] or [FollowupCommandArgs]; result MessageRef",
    capabilities.CANCEL: "args: [] or [sessionId] or [{sessionId, keepInbox?}]; result {}",
    capabilities.NEW_SESSION: "args: [] or [{workspaceUri?, title?}]; result SessionRef",
    capabilities.RUN_SKILL: "args: [name] or [SkillRunParams]; result MessageRef",
    capabilities.REVIEW_RESOLVE: "args: [ReviewResolveParams]; result ReviewResolveResult",
}
