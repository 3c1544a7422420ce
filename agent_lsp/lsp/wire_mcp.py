"""The wire models of MCP servers: their state, sign-in, prompts, and their questions to the user."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agent_lsp.lsp.wire_base import WireModel


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
