"""Settings: what the user configures, from where, and in which order.

Layers, lowest precedence first (a later layer overrides keys of earlier ones):

1. defaults (the pydantic models below)
2. the user config file, TOML: `<platform config dir>/agent-lsp/config.toml`
   (Linux: $XDG_CONFIG_HOME or ~/.config; macOS: ~/Library/Application Support;
   Windows: %APPDATA%), or the file named by $AGENT_LSP_CONFIG
3. environment variables (`ENV_VARS` below)
4. `initializationOptions` of the LSP `initialize` request
5. `workspace/configuration` section "agentLsp" (re-read on didChangeConfiguration)
6. the managed policy's pinned `model` keys (`ManagedPolicy` below): above every
   other layer, so no user, project or editor setting changes them

Each layer is a JSON-like dict in the wire shape (camelCase keys, e.g.
`{"model": {"provider": "openai", "model": "gpt-4o"}, "sessionsDir": "..."}`).
A layer whose value fails validation is reported (the caller shows the message
to the user) and only its bad keys are dropped: the previous value stays.
Every layer's secrets (keys, tokens, headers) are registered with
`agent_lsp.secrets` as it arrives, so no log, event or notification shows them.
"""

from __future__ import annotations

import copy
import difflib
import os
import sys
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic.alias_generators import to_camel


from agent_lsp import secrets
from agent_lsp.llm.settings import ModelEnvironment, ModelSettings
from agent_lsp.sandbox.domains import checked_entry

APP_DIR_NAME = "agent-lsp"

# env var -> path of the setting it sets (wire keys)
ENV_VARS: dict[str, tuple[str, ...]] = {
    "AGENT_LSP_PROVIDER": ("model", "provider"),
    "AGENT_LSP_MODEL": ("model", "model"),
    "AGENT_LSP_BASE_URL": ("model", "baseUrl"),
    "AGENT_LSP_SESSIONS_DIR": ("sessionsDir",),
    "AGENT_LSP_LOG_LEVEL": ("logLevel",),
    "AGENT_LSP_PERMISSION_TIMEOUT_SECONDS": ("permissions", "askTimeoutSeconds"),
    "AGENT_LSP_SANDBOXED_COMMANDS": ("permissions", "sandboxedCommands"),  # "ask": sandboxed commands are asked about too
    "AGENT_LSP_SANDBOX": ("shell", "sandbox"),  # "auto" | "require" | "off"
    "AGENT_LSP_LANGUAGE_SERVERS": ("language", "enabled"),  # "false": no language servers for the agent
    "AGENT_LSP_TOOL_SET": ("toolSet",),  # "auto", "small" or "full"
}

LAYER_ORDER = ("file", "env", "initializationOptions", "workspace", "policy")


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class PermissionRuleSettings(_Camel):
    """allow / ask / deny a tool, optionally only for a command prefix or a path glob."""

    tool: str = Field(description='a tool name, or "*" for any')
    action: Literal["allow", "ask", "deny"]
    command_prefix: str | None = None
    path_glob: str | None = None


class PermissionSettings(_Camel):
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


class ShellSettings(_Camel):
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


class McpSettings(_Camel):
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


class EditSettings(_Camel):
    review: Literal["apply", "review", "ask"] = Field(
        default="apply",
        description='how the agent\'s edits land: "apply" (in the buffer and saved), "review" (in the buffer, '
        'unsaved, each hunk kept or undone by the user), "ask" (each edit waits for the user\'s approval of its diff)',
    )


class LanguageSettings(_Camel):
    """The language servers the agent asks (see docs/language.md)."""

    enabled: bool = Field(default=True, description="offer the language tool and run language servers for the agent")
    diagnostics_after_edit: bool = Field(
        default=True, description="end each edit's result with the problems it added, from the language servers")
    discovery: bool = Field(
        default=True, description="use the built-in servers found on PATH; false: only those in languageServers")
    wait_seconds: float = Field(
        default=1.5, ge=0, le=30, description="how long an edit's result waits for the servers' fresh diagnostics")
    idle_shutdown_seconds: float = Field(default=600.0, gt=0, description="a server unused this long is stopped")


class SessionSettings(_Camel):
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


# ------------------------------------------------------------------ managed policy


class PolicyRuleSettings(PermissionRuleSettings):
    action: Literal["ask", "deny"]  # a policy tightens; what it does not deny stays the user's to decide


class ManagedPolicy(_Camel):
    """The system-wide policy file an administrator installs (see docs/capabilities.md).
    Nothing in the user's, the project's or the editor's settings loosens it."""

    denied_tools: list[str] = Field(default_factory=list, description='tool names, "prefix*" or "*": never run')
    rules: list[PolicyRuleSettings] = Field(default_factory=list, description="permission rules that come first")
    model: dict[str, Any] = Field(default_factory=dict, description="model settings pinned for every session")
    allow_project_hooks: bool = True
    allow_project_mcp_servers: bool = True

    def denies_tool(self, name: str) -> bool:
        return any(p == "*" or p == name or (p.endswith("*") and name.startswith(p[:-1])) for p in self.denied_tools)


def policy_path(env: Mapping[str, str] = os.environ) -> Path:
    """$AGENT_LSP_POLICY, else the platform's system-wide place."""
    explicit = env.get("AGENT_LSP_POLICY")
    if explicit:
        return Path(explicit)
    if sys.platform == "win32":
        return Path(env.get("PROGRAMDATA") or "C:/ProgramData") / APP_DIR_NAME / "policy.toml"
    if sys.platform == "darwin":
        return Path("/Library/Application Support") / APP_DIR_NAME / "policy.toml"
    return Path("/etc") / APP_DIR_NAME / "policy.toml"


def read_policy(env: Mapping[str, str] = os.environ) -> tuple[ManagedPolicy, Path | None, list[str]]:
    """The managed policy (empty when there is no file) and where it came from.
    A policy file that cannot be read or validated denies every tool: it was
    installed to restrict, so failing open would loosen it."""
    path = policy_path(env)
    data, problems = read_config_file(path)
    if not problems and not path.exists():
        return ManagedPolicy(), None, []
    if not problems:
        try:
            return ManagedPolicy.model_validate(data), path, []
        except ValidationError as error:
            problems = [Problem(f"managed policy {path}: {describe_invalid(item)}") for item in error.errors()]
    return ManagedPolicy(denied_tools=["*"]), path, [Problem(f"{p}; every tool is denied until it is fixed") for p in problems]


# ------------------------------------------------------------------ platform dirs


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    if sys.platform == "win32":
        return Path(env.get("APPDATA") or Path.home() / "AppData" / "Roaming") / APP_DIR_NAME
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_DIR_NAME
    return Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / APP_DIR_NAME


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / APP_DIR_NAME
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_DIR_NAME
    return Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / APP_DIR_NAME


def user_config_path(env: Mapping[str, str] = os.environ) -> Path:
    explicit = env.get("AGENT_LSP_CONFIG")
    return Path(explicit) if explicit else config_dir(env) / "config.toml"


# ------------------------------------------------------------------------ layers


class Problem(str):
    """One readable line about a setting. A "warning" (an unknown key, ignored)
    leaves everything else working; an "error" means a setting the user asked
    for is not in effect (a one-shot command such as `run` stops on it)."""

    severity: Literal["warning", "error"] = "error"

    @classmethod
    def warning(cls, text: str) -> Problem:
        problem = cls(text)
        problem.severity = "warning"
        return problem


def read_config_file(path: Path, *, required: bool = False) -> tuple[dict[str, Any], list[str]]:
    """The file layer; a missing file is an empty layer (a problem when the user
    named it), an unreadable or malformed one a problem."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle), []
    except FileNotFoundError:
        return {}, [Problem(f"AGENT_LSP_CONFIG names {path}, which does not exist")] if required else []
    except tomllib.TOMLDecodeError as error:
        return {}, [Problem(f"config file {path} is not valid TOML: {error}; none of it applies")]
    except OSError as error:
        return {}, [Problem(f"config file {path} cannot be read: {error.strerror or error}")]


# ------------------------------------------------------------ unknown keys


def _field_names(model: type[BaseModel]) -> dict[str, Any]:
    """Every name a key of `model` may be spelled with (wire alias and Python
    name) -> the field's annotation."""
    names: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        for spelling in (field.alias, name):
            if spelling:
                names[spelling] = field.annotation
    return names


def _nested_models(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The settings model inside a field's type, and how it is held there:
    "one" (X or X | None), "list" (list[X]) or "dict" (dict[str, X])."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, "one"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, tuple) and args:
        inner, how = _nested_models(args[0])
        return (inner, "list") if how == "one" else (None, "")
    if origin is dict and len(args) == 2:
        inner, how = _nested_models(args[1])
        return (inner, "dict") if how == "one" else (None, "")
    for arg in args:  # a union: X | None
        inner, how = _nested_models(arg)
        if inner is not None:
            return inner, how
    return None, ""


def drop_unknown_keys(data: dict[str, Any], model: type[BaseModel] | None = None,
                      path: tuple[str, ...] = ()) -> list[str]:
    """Remove the keys no settings model knows from `data` (in place), each with
    a line naming the nearest valid key. Valid keys come from the pydantic
    models, so a new setting needs nothing here."""
    model = model or Settings
    names = _field_names(model)
    wire_names = [field.alias or name for name, field in model.model_fields.items()]
    messages: list[str] = []
    for key in list(data):
        dotted = ".".join((*path, str(key)))
        if key not in names:
            lowered = {name.lower(): name for name in wire_names}
            close = difflib.get_close_matches(str(key).lower(), list(lowered), n=1, cutoff=0.6)
            hint = f' (did you mean "{".".join((*path, lowered[close[0]]))}"?)' if close else ""
            messages.append(f'unknown setting "{dotted}"{hint}; ignored')
            del data[key]
            continue
        inner, how = _nested_models(names[key])
        value = data[key]
        if inner is None:
            continue
        if how == "one" and isinstance(value, dict):
            messages += drop_unknown_keys(value, inner, (*path, str(key)))
        elif how == "list" and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    messages += drop_unknown_keys(item, inner, (*path, str(key), str(index)))
        elif how == "dict" and isinstance(value, dict):
            for name, item in value.items():
                if isinstance(item, dict):
                    messages += drop_unknown_keys(item, inner, (*path, str(key), str(name)))
    return messages


_SECRET_HINTS = ("key", "token", "secret", "password", "header", "env")


def describe_invalid(item: Mapping[str, Any]) -> str:
    """A pydantic error about one setting, in our words: `setting model.provider
    = "olama": must be one of 'auto', 'openai', 'anthropic' or 'scripted'`."""
    loc = ".".join(map(str, item["loc"]))
    message = str(item.get("msg", "invalid"))
    kind = item.get("type")
    if kind == "extra_forbidden":
        return f'unknown setting "{loc}"'
    if kind == "literal_error" and item.get("ctx", {}).get("expected"):
        message = f"must be one of {item['ctx']['expected']}"
    elif message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    elif message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    elif kind == "missing":
        message = "is required"
    value = item.get("input")
    shown = ""
    if isinstance(value, (str, int, float, bool)) and not any(h in loc.lower() for h in _SECRET_HINTS):
        text = repr(value)
        shown = f" = {text if len(text) <= 60 else text[:57] + '...'}"
    return f"setting {loc}{shown}: {message}"


def env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for name, path in ENV_VARS.items():
        value = env.get(name)
        if value:
            _set_path(layer, path, value.lower() if name == "AGENT_LSP_LOG_LEVEL" else value)
    return layer


def model_environment(env: Mapping[str, str]) -> ModelEnvironment:
    """The variables that choose and reach the model, for `llm.factory.create_provider`."""

    def get(name: str) -> str | None:
        value = env.get(name)
        return value.strip() if value and value.strip() else None

    def secret(name: str) -> SecretStr | None:
        value = get(name)
        return SecretStr(value) if value else None

    providers = ("anthropic", "openai")
    return ModelEnvironment(
        provider=get("AGENT_LSP_PROVIDER"),
        model=get("AGENT_LSP_MODEL"),
        base_url=get("AGENT_LSP_BASE_URL"),
        api_key=secret("AGENT_LSP_API_KEY"),
        provider_api_keys={p: key for p in providers if (key := secret(f"{p.upper()}_API_KEY"))},
        provider_base_urls={p: url for p in providers if (url := get(f"{p.upper()}_BASE_URL"))},
    )


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _set_path(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


def _drop_path(target: Any, path: tuple[Any, ...]) -> bool:
    """Remove the key at `path` (as far as it exists in this layer); True if removed."""
    for depth in range(len(path), 0, -1):
        node = target
        for key in path[: depth - 1]:
            if isinstance(node, dict) and key in node:
                node = node[key]
            else:
                node = None
                break
        if isinstance(node, dict) and path[depth - 1] in node:
            del node[path[depth - 1]]
            return True
    return False


def _restore_path(target: dict[str, Any], previous: dict[str, Any], path: tuple[Any, ...]) -> None:
    """Put back this layer's previous value at `path`, if it had one."""
    node: Any = previous
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return
        node = node[key]
    _set_path(target, tuple(path), copy.deepcopy(node))


def configuration_errors(env: Mapping[str, str], settings: Mapping[str, Any] | None = None,
                         source: str = "initializationOptions") -> list[str]:
    """The errors (not the warnings) of the user's configuration: the config
    file, the environment and `settings` as a client would send them."""
    layers = SettingsLayers(env)
    problems = layers.problems + layers.set_layer("initializationOptions", settings or {}, source=source)
    errors = [p for p in problems if getattr(p, "severity", "error") == "error"]
    model_typos = [p for p in problems if p not in errors and 'unknown setting "model.' in str(p)]
    if model_typos and layers.current.model.provider == "auto":
        # A misspelt model key that leaves no model configured would end in the
        # scripted stand-in's canned answer: an error, not a warning, here.
        from agent_lsp.llm.factory import chosen_model

        try:
            provider = chosen_model(layers.current.model, model_environment(env))[0]
        except ValueError:  # a bad AGENT_LSP_PROVIDER: reported as such elsewhere
            provider = None
        if provider == "scripted":
            errors += [f"{p}, so no model is configured" for p in model_typos]
    return errors


class SettingsLayers:
    """The settings of one server: its layers, and the merged, validated result.

    `set_layer()` returns the problems found (readable, one per bad key); the
    bad keys are dropped from that layer so every other key still applies and
    the bad setting keeps its previous value."""

    def __init__(self, env: Mapping[str, str] = os.environ, config_file: Path | None = None):
        self._layers: dict[str, dict[str, Any]] = {name: {} for name in LAYER_ORDER}
        self.current = Settings()
        self.problems: list[str] = []
        secrets.register_env(env)
        path = config_file or user_config_path(env)
        data, problems = read_config_file(path, required=config_file is None and bool(env.get("AGENT_LSP_CONFIG")))
        self.problems += problems
        self.problems += self.set_layer("file", data, source=str(path))
        self.problems += self.set_layer("env", env_layer(env), source="environment")
        self.policy, self.policy_path, problems = read_policy(env)
        self.problems += problems
        if self.policy.model:
            pinned = dict(self.policy.model)
            pinned.setdefault("fallback", None)  # a fallback from another layer would leave the pinned model
            if pinned.get("baseUrl"):
                pinned["baseUrlSource"] = f"the managed policy {self.policy_path}"
            self.problems += self.set_layer("policy", {"model": pinned}, source=f"managed policy {self.policy_path}")

    def layer(self, name: str) -> dict[str, Any]:
        return copy.deepcopy(self._layers[name])

    def set_layer(self, name: str, data: Any, *, source: str | None = None) -> list[str]:
        if name not in self._layers:
            raise KeyError(name)
        source = source or name
        secrets.register_settings(data)  # before validation: a rejected value is still a secret
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            return [Problem(f"{source}: settings must be an object, got {type(data).__name__}")]
        candidate_layer = copy.deepcopy(dict(data))
        problems: list[str] = [Problem.warning(f"{source}: {m}") for m in drop_unknown_keys(candidate_layer)]
        for _ in range(50):  # each round drops at least one bad key
            layers = dict(self._layers, **{name: candidate_layer})
            merged: dict[str, Any] = {}
            for layer_name in LAYER_ORDER:
                merged = deep_merge(merged, layers[layer_name])
            try:
                settings = Settings.model_validate(merged)
            except ValidationError as error:
                dropped = False
                for item in error.errors():
                    loc = tuple(item["loc"])
                    if _drop_path(candidate_layer, loc):
                        dropped = True
                        _restore_path(candidate_layer, self._layers[name], loc)
                        problems.append(Problem(f"{source}: {describe_invalid(item)} (kept the previous value)"))
                if not dropped:  # the bad value came from another layer; leave this one unchanged
                    problems.append(Problem(f"{source}: {describe_invalid(error.errors()[0])}"))
                    return problems
                continue
            self._layers[name] = candidate_layer
            self.current = settings
            return problems
        return problems + [Problem(f"{source}: settings rejected")]
