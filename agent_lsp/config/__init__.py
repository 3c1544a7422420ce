"""Settings: what the user configures (the models here), from where, and in
which order (`SettingsLayers`, config/layers.py).

Layers, lowest precedence first (a later layer overrides keys of earlier ones):

1. defaults (the pydantic models below)
2. the user config file, TOML: `<platform config dir>/agent-lsp/config.toml`
   (Linux: $XDG_CONFIG_HOME or ~/.config; macOS: ~/Library/Application Support;
   Windows: %APPDATA%), or the file named by $AGENT_LSP_CONFIG
3. environment variables (`ENV_VARS`, config/environment.py)
4. `initializationOptions` of the LSP `initialize` request
5. `workspace/configuration` section "agentLsp" (re-read on didChangeConfiguration)
6. the managed policy's pinned `model` keys (`ManagedPolicy`, config/policy.py): above every
   other layer, so no user, project or editor setting changes them

Each layer is a JSON-like dict in the wire shape (camelCase keys, e.g.
`{"model": {"provider": "openai", "model": "gpt-4o"}, "sessionsDir": "..."}`).
A layer whose value fails validation is reported (the caller shows the message
to the user, config/checks.py) and only its bad keys are dropped: the previous value stays.
Every layer's secrets (keys, tokens, headers) are registered with
`agent_lsp.secrets` as it arrives, so no log, event or notification shows them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agent_lsp.llm.settings import ModelSettings
from agent_lsp.sandbox.domains import checked_entry


class SettingsModel(BaseModel):
    """The base of the settings models: camelCase keys, unknown keys refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class PermissionRuleSettings(SettingsModel):
    """allow / ask / deny a tool, optionally only for a command prefix or a path glob."""

    tool: str = Field(description='a tool name, or "*" for any')
    action: Literal["allow", "ask", "deny"]
    command_prefix: str | None = None
    path_glob: str | None = None


class PermissionSettings(SettingsModel):
    defaults: dict[Literal["command", "read", "write", "delete"], Literal["allow", "ask", "deny"]] = Field(
        default_factory=dict, description="per kind of call; built-in: commands ask, reads and writes are allowed"
    )
    rules: list[PermissionRuleSettings] = Field(default_factory=list)
    ask_timeout_seconds: float = Field(
        default=300.0, gt=0, description="an unanswered permission question counts as deny after this long"
    )
    sandboxed_commands: Literal["allow", "ask"] = Field(
        default="allow", description='a command that runs sandboxed with no network: "allow" (no question unless a rule '
        'asks or denies) or "ask" like any command')


class ShellSettings(SettingsModel):
    """The environment of the agent's commands (see agent_lsp/tools/command_env.py)."""

    inherit: Literal["all", "core", "none"] = Field(
        default="all", description='"all": the server\'s environment without secrets; "core": PATH, HOME, LANG and '
        'the like only; "none": nothing'
    )
    pass_env: list[str] = Field(default_factory=list, description="variables (names or globs) passed through even so")
    # The sandbox of the agent's commands and hooks (see docs/sandbox.md).
    sandbox: Literal["auto", "require", "off"] = Field(
        default="auto", description='"auto": sandboxed where a sandbox works, else asked about as unsandboxed; '
        '"require": never run a command unsandboxed; "off": no sandbox')
    network: Literal["off", "on"] = Field(default="off", description="may sandboxed commands use the network")
    allowed_domains: list[Annotated[str, AfterValidator(checked_entry)]] = Field(
        default_factory=list, description='with network "off": the hosts (pypi.org, *.github.com) sandboxed commands '
        "reach through the sandbox's proxy")
    allow_unix_sockets: bool = Field(default=False, description="sandboxed commands may make Unix sockets")
    landlock: bool = Field(default=True, description="where bubblewrap does not work, sandbox with Landlock and "
                           "seccomp (weaker); false: unsandboxed, asked about")
    writable_paths: list[str] = Field(default_factory=list,
                                      description="writable in the sandbox besides the workspace and the temp folder")
    readable_paths: list[str] = Field(default_factory=list,
                                      description="visible (read-only) in the sandbox besides the system and the toolchains")
    sandbox_exceptions: list[str] = Field(
        default_factory=list, description="command prefixes (e.g. docker) run outside the sandbox, always asked about")


# -------------------------------------------------------------- MCP servers
# The servers themselves (`mcpServers`, Claude Code's format) stay raw here:
# agent_lsp.mcp.config validates each entry on its own, so one bad entry is
# reported by name and the others still start.


class McpSettings(SettingsModel):
    tool_timeout_seconds: float = Field(default=120.0, gt=0, le=3600, description="an MCP tool call is cancelled after this long")
    connect_timeout_seconds: float = Field(default=30.0, gt=0, le=600, description="a server that does not connect within this fails")
    first_step_wait_seconds: float = Field(
        default=10.0, ge=0, le=120, description="how long a session's first request waits for servers still starting"
    )
    max_output_chars: int = Field(default=50_000, ge=1_000, description="longer tool results are cut, with a marker")
    elicitation_timeout_seconds: float = Field(
        default=300.0, gt=0, le=3600, description="an MCP server's question the user leaves unanswered this long is cancelled"
    )
    sandbox: Literal["off", "auto", "require"] = Field(default="off", description='"auto": stdio servers run in the '
        'commands\' sandbox (the shell settings) where one works; "require": never unsandboxed; "off": as the user')


class EditSettings(SettingsModel):
    review: Literal["apply", "review", "ask"] = Field(
        default="apply",
        description='how the agent\'s edits land: "apply" (in the buffer and saved), "review" (in the buffer, '
        'unsaved, each hunk kept or undone by the user), "ask" (each edit waits for the user\'s approval of its diff)',
    )


class LanguageSettings(SettingsModel):
    """The language servers the agent asks (see docs/language.md)."""

    enabled: bool = Field(default=True, description="offer the language tool and run language servers for the agent")
    diagnostics_after_edit: bool = Field(
        default=True, description="end each edit's result with the problems it added, from the language servers")
    discovery: bool = Field(
        default=True, description="use the built-in servers found on PATH; false: only those in languageServers")
    wait_seconds: float = Field(
        default=1.5, ge=0, le=30, description="how long an edit's result waits for the servers' fresh diagnostics")
    idle_shutdown_seconds: float = Field(default=600.0, gt=0, description="a server unused this long is stopped")


class SessionSettings(SettingsModel):
    titles: Literal["first-message", "model"] = Field(
        default="first-message",
        description='how a session gets its title: "first-message" (the first thing the user wrote) or "model" '
        "(after the first turn the session's model is asked for a short title, in a separate small request)",
    )
    title_model: str | None = Field(
        default=None, description='with titles = "model": another (cheaper) model of the same provider to ask')


class Settings(BaseModel):
    """The `agentLsp` settings object (same shape in every layer)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    model: ModelSettings = Field(default_factory=ModelSettings)
    sessions_dir: str | None = Field(
        default=None, description="where session logs go; default: <platform data dir>/agent-lsp/sessions"
    )
    log_level: Literal["debug", "info", "warning", "error"] | None = Field(
        default=None, description="agent_lsp's log level; default: the command line's --log-level"
    )
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    shell: ShellSettings = Field(default_factory=ShellSettings)
    max_parallel_tool_calls: int = Field(default=10, ge=1, le=64)
    cancel_grace_s: float = Field(default=2.0, ge=0, le=60, alias="cancelGraceSeconds")
    mcp_servers: dict[str, Any] = Field(default_factory=dict, description="MCP servers by name (see docs/mcp.md)")
    mcp: McpSettings = Field(default_factory=McpSettings)
    edits: EditSettings = Field(default_factory=EditSettings)
    language: LanguageSettings = Field(default_factory=LanguageSettings)
    # Kept raw, as mcpServers: agent_lsp.language.specs checks each entry.
    language_servers: dict[str, Any] = Field(
        default_factory=dict, description="language servers by name, added or changing a built-in (see docs/language.md)")
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    tool_set: Literal["auto", "full", "small"] = Field(
        default="auto", description='the tools offered: "small" (read, edit, grep, run, language) below an 8k window')
    # Kept raw, as mcpServers: agent_lsp.workspace.hook_config checks each entry (Claude Code's shape).
    hooks: dict[str, Any] = Field(default_factory=dict, description="user hooks by event name (see docs/capabilities.md)")
