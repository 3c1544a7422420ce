"""The wire models of what a folder offers a session: sub-agents, permission modes and rules,
models (switch, list, info, check), skills, and the edits waiting for review."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_lsp.agent import event_shapes
from agent_lsp.lsp.wire_base import WireModel


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
    error: event_shapes.LlmFailure | None = None
# ----------------------------------------------------------------- edit review


# served by both faces: agent_lsp/service/requests.py
from agent_lsp.service.requests import (  # noqa: E402,F401
    PendingHunkInfo,
    ReviewListParams,
    ReviewListResult,
    ReviewResolveParams,
    ReviewResolveResult,
    ReviewSkip,
)
