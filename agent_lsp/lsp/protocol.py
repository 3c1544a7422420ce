"""The agent_lsp wire protocol v1: every custom message as a pydantic model.

This module is the contract the editor clients test against: the method
table, the constants, the notifications and requests the server sends; the
models of the requests it answers are in the `wire_*` modules beside it, by
concept (sessions, MCP, what a folder offers, language queries), and every
one of them is re-exported here. Keys on the wire are camelCase (aliases);
models are dumped with `wire_dump()` (by alias, no None-valued optional
fields). `docs/protocol.schema.json` is generated from the method table below
by `lsp/protocol_gen.py`:

    python -m agent_lsp.lsp.protocol_gen --schema > docs/protocol.schema.json

and a test fails when the committed file and these models differ.

Methods are grouped by direction:
- client -> server requests (`agent/followup`, `agent/session/*`, ...),
- server -> client notifications (`session/event`, `agent/status`, ...),
- server -> client requests (`agent/permission`, `agent/saveDocuments`, `agent/languageQuery`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agent_lsp.agent import live_events
from agent_lsp.lsp import capabilities
from agent_lsp.service.requests import SHARED_REQUESTS
from agent_lsp.lsp.wire_base import (  # noqa: F401 (re-exported: the wire's users import them from here)
    Position, Range, WireModel, describe_validation_error, wire_dump, ContentBlock, ContextItem, Content,
    Empty,
)
from agent_lsp.lsp.wire_images import ImageBlock, SessionFileParams, SessionFileResult  # noqa: F401 (re-exported)
from agent_lsp.lsp.wire_language import (  # noqa: F401 (re-exported: the wire's users import them from here)
    LanguageQueryParams, LanguageQueryResult, LanguageServerStatus, LanguageStatusParams, LanguageStatusResult,
)
from agent_lsp.lsp.wire_mcp import (  # noqa: F401 (re-exported: the wire's users import them from here)
    McpListParams, McpServerStatus, McpListResult, McpServerParams, McpPromptsParams, McpPromptArgument,
    McpPromptInfo, McpPromptsResult, McpPromptRunParams, ElicitParams, ElicitResult,
)
from agent_lsp.lsp.wire_sessions import (  # noqa: F401 (re-exported: the wire's users import them from here)
    FollowupParams, MessageRef, SteerParams, CancelParams, InboxRemoveParams, InboxRemoveResult,
    SessionNewParams, SessionRef, SessionListParams, SessionInfo, SessionListResult, SessionRenameParams,
    SessionRenameResult, Inbox, SessionLoadResult, SessionReplayParams, SessionReplayResult,
    SessionDeleteParams, SessionDeleteResult, SessionCompactResult, TurnRevertParams, TurnRevertResult, SessionRewindParams,
    WorktreeRequest,
    TurnRevertReport, SessionRewindResult, SessionForkParams, InboxUpdateParams, InboxUpdateResult,
    InboxMoveParams, InboxMoveResult, InboxPauseParams, InboxPauseResult, SkippedPath, Event, Message,
    typed_event,
)
from agent_lsp.lsp.wire_workspace import (  # noqa: F401 (re-exported: the wire's users import them from here)
    SubagentCancelParams, SubagentCancelResult, SessionModeParams, SessionModeResult, SessionSetModelParams,
    SessionSetModelResult, ModelListParams, ModelChoice, ModelListResult, ModelInfoParams, ModelInfoResult,
    SkillListParams, SkillInfo, SkillListResult, SkillRunParams, PermissionRulesParams, PermissionRuleInfo,
    PermissionRulesResult, PermissionRevokeParams, ModelCheckParams, ModelCheckResult, PendingHunkInfo,
    ReviewListParams, ReviewListResult, ReviewResolveParams, ReviewSkip, ReviewResolveResult,
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


# ---------------------------------------------------- server -> client notifications


class SessionEventParams(WireModel):
    """One or more consecutive durable events of a session, in seq order."""

    session_id: str
    events: list[Event]


class StatusParams(live_events.Status):
    session_id: str


class InboxInsertedParams(live_events.InboxInserted):
    session_id: str


class InboxDiscardedParams(live_events.InboxDiscarded):
    session_id: str


class InboxClaimedParams(live_events.InboxClaimed):
    session_id: str


class InboxChangedParams(live_events.InboxChanged):
    session_id: str


class AgentErrorParams(live_events.AgentError):
    session_id: str


class ToolProgressParams(live_events.ToolProgress):
    session_id: str


class SubagentStatusParams(live_events.SubagentStatus):
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
    permission_id: str | None = Field(default=None, description="set when the question is asked in several windows at "
                                      "once (the agent host): agent/permission/answered names it once one answered")


class PermissionResult(WireModel):
    answer: Literal["once", "session", "always", "deny"]


class PermissionAnsweredParams(WireModel):
    """A question asked in several windows was answered in another one: drop it here."""

    session_id: str | None = None
    permission_id: str
    answer: Literal["once", "session", "always", "deny"]


class SessionPresenceParams(WireModel):
    """On the agent host: how many windows have the session open (this one included)."""

    session_id: str
    windows: int


class SaveDocumentsParams(WireModel):
    uris: list[str]


class SaveDocumentsResult(WireModel):
    unsaved: list[str] | None = Field(default=None, description=(
        "the URIs the client left unsaved because their buffers hold the user's own unsaved changes "
        "(the agent's edit is in the buffer, the file on disk is unchanged); the model is told"))


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


# ------------------------------------------------------------------ the method table

CLIENT_REQUESTS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "agent/followup": (FollowupParams, MessageRef),
    "agent/steer": (SteerParams, MessageRef),
    "agent/cancel": (CancelParams, Empty),
    "agent/inbox/remove": (InboxRemoveParams, InboxRemoveResult),
    "agent/session/new": (SessionNewParams, SessionRef),
    "agent/session/list": (SessionListParams, SessionListResult),
    "agent/session/load": (SessionRef, SessionLoadResult),
    "agent/session/replay": (SessionReplayParams, SessionReplayResult),
    "agent/session/delete": (SessionDeleteParams, SessionDeleteResult),
    "agent/session/rename": (SessionRenameParams, SessionRenameResult),
    "agent/session/file": (SessionFileParams, SessionFileResult),
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
    "agent/language/status": (LanguageStatusParams, LanguageStatusResult),
}

# What both faces answer the same way (`agent_lsp.service.requests`), served from the service's table.
CLIENT_REQUESTS.update({method: (shared.params, shared.result) for method, shared in SHARED_REQUESTS.items()})

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
    "agent/permission/answered": PermissionAnsweredParams,
    "agent/session/presence": SessionPresenceParams,
}

SERVER_REQUESTS: dict[str, tuple[type[WireModel], type[WireModel]]] = {
    "agent/permission": (PermissionParams, PermissionResult),
    "agent/saveDocuments": (SaveDocumentsParams, SaveDocumentsResult),
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
