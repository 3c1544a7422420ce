"""Which MCP servers a workspace has, from where, validated one by one.

Sources, lowest precedence first (a later one replaces a server of the same name):

1. `[mcpServers.NAME]` tables in the user config file (`config.toml`);
2. `.mcp.json` at the workspace root, in the format Claude Code uses
   (`{"mcpServers": {"NAME": {"command", "args", "env"}}}` for stdio,
   `{"type": "http", "url", "headers"}` for Streamable HTTP);
3. `mcpServers` in `initializationOptions` and `workspace/configuration`.

Layers 1 and 3 arrive merged in `Settings.mcp_servers`; the user file is
read again here to tell them apart (an entry equal to the file's is the
file's). Servers from `.mcp.json` are marked `project`: a cloned repository
must not run commands on open, so they start only once the user trusts them.

`${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env`,
`cwd`, `url` and `headers`, from the language server's environment. A bad
entry becomes a `ServerProblem` naming it; the others are unaffected.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

PROJECT_FILE = ".mcp.json"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,48}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

Source = Literal["user", "project", "editor"]


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Literal["stdio", "http"]
    source: Source
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    tool_timeout_s: float | None = None  # None: the `mcp.toolTimeoutSeconds` setting
    # As written, before expansion: what the user is asked to trust (no secrets from the environment).
    shown: str = ""

    @property
    def is_project(self) -> bool:
        return self.source == "project"


@dataclass(frozen=True)
class ServerProblem:
    name: str
    source: Source
    reason: str

    def __str__(self) -> str:
        return f"MCP server '{self.name}' ({self.source}): {self.reason}"


class _Unset(Exception):
    def __init__(self, variable: str):
        self.variable = variable


def expand(text: str, env: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}`, as Claude Code expands them; an unset VAR without default is an error."""

    def one(match: re.Match[str]) -> str:
        value = env.get(match.group(1))
        if value is None or (value == "" and match.group(2) is not None):
            if match.group(2) is None:
                raise _Unset(match.group(1))
            return match.group(2)
        return value

    return _VAR.sub(one, text)


def parse_server(name: str, raw: Any, source: Source, env: Mapping[str, str]) -> ServerConfig | ServerProblem:
    """One entry, checked and expanded; a problem says what is wrong in words."""

    def problem(reason: str) -> ServerProblem:
        return ServerProblem(name, source, reason)

    if not NAME_PATTERN.match(name):
        return problem("the name may use only letters, digits, '_', '-' and '.' (at most 48)")
    if not isinstance(raw, Mapping):
        return problem(f"expected an object, got {type(raw).__name__}")
    kind = raw.get("type")
    if kind is None:
        kind = "http" if "url" in raw and "command" not in raw else "stdio"
    if kind == "streamable-http":
        kind = "http"
    if kind == "sse":
        return problem("the SSE transport is not supported; use a Streamable HTTP URL (type \"http\")")
    if kind not in ("stdio", "http"):
        return problem(f"unknown type {kind!r} (expected \"stdio\" or \"http\")")
    timeout = raw.get("toolTimeoutSeconds")
    if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0):
        return problem("toolTimeoutSeconds must be a positive number")
    try:
        if kind == "stdio":
            command, args, envs = raw.get("command"), raw.get("args", []), raw.get("env", {})
            if not isinstance(command, str) or not command.strip():
                return problem("a stdio server needs a \"command\" (a string)")
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                return problem("\"args\" must be a list of strings")
            if not _is_string_map(envs):
                return problem("\"env\" must be an object of strings")
            cwd = raw.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                return problem("\"cwd\" must be a string")
            return ServerConfig(
                name,
                "stdio",
                source,
                command=expand(command, env),
                args=tuple(expand(a, env) for a in args),
                env={k: expand(v, env) for k, v in envs.items()},
                cwd=expand(cwd, env) if cwd else None,
                tool_timeout_s=timeout,
                shown=" ".join([command, *args]),
            )
        url, headers = raw.get("url"), raw.get("headers", {})
        if not isinstance(url, str) or not url.strip():
            return problem("an http server needs a \"url\" (a string)")
        if not _is_string_map(headers):
            return problem("\"headers\" must be an object of strings")
        headers = {k: expand(v, env) for k, v in headers.items()}
        token_var = raw.get("bearerTokenEnvVar")
        if token_var is not None:
            if not isinstance(token_var, str) or not env.get(token_var):
                return problem(f"bearerTokenEnvVar: environment variable {token_var} is not set")
            headers.setdefault("Authorization", f"Bearer {env[token_var]}")
        expanded = expand(url, env)
        if not expanded.startswith(("http://", "https://")):
            return problem(f"the url must start with http:// or https:// (got {url!r})")
        return ServerConfig(name, "http", source, url=expanded, headers=headers, tool_timeout_s=timeout, shown=url)
    except _Unset as unset:
        return problem(f"environment variable {unset.variable} is not set (used as ${{{unset.variable}}})")


def _is_string_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def read_project_file(root: Path) -> tuple[dict[str, Any], list[ServerProblem]]:
    """The `mcpServers` object of `<root>/.mcp.json` (missing file: none)."""
    path = root / PROJECT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except (OSError, ValueError) as error:
        return {}, [ServerProblem(PROJECT_FILE, "project", f"cannot read {path}: {error}")]
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, [ServerProblem(PROJECT_FILE, "project", f"{path}: \"mcpServers\" must be an object")]
    return servers, []


def workspace_servers(
    root: Path,
    settings_servers: Mapping[str, Any],
    user_file_servers: Mapping[str, Any],
    env: Mapping[str, str] = os.environ,
) -> tuple[list[ServerConfig], list[ServerProblem]]:
    """Every server of the workspace by precedence, and the problems of the bad entries."""
    project, problems = read_project_file(root)
    chosen: dict[str, tuple[Any, Source]] = {}
    for name, raw in settings_servers.items():
        if user_file_servers.get(name) == raw:
            chosen[name] = (raw, "user")
    for name, raw in project.items():
        chosen[name] = (raw, "project")
    for name, raw in settings_servers.items():
        if user_file_servers.get(name) != raw:
            chosen[name] = (raw, "editor")
    servers: list[ServerConfig] = []
    for name, (raw, source) in chosen.items():
        if isinstance(raw, Mapping) and raw.get("enabled") is False:
            continue
        parsed = parse_server(name, raw, source, env)
        (servers if isinstance(parsed, ServerConfig) else problems).append(parsed)
    return servers, problems


def missing_program(server: ServerConfig, root: Path, env: Mapping[str, str]) -> ServerProblem | None:
    """A stdio server whose program does not exist (or cannot be run), found
    the way it would be started: a path from the server's folder, a bare name
    on the `PATH` it gets. Starts nothing."""
    if server.transport != "stdio" or not server.command:
        return None
    command = server.command
    if os.sep in command or (os.altsep and os.altsep in command):
        program = Path(command).expanduser()
        folder = root / server.cwd if server.cwd else root
        found = (folder / program).is_file() and os.access(folder / program, os.X_OK)
    else:
        found = shutil.which(command, path=server.env.get("PATH", env.get("PATH", os.defpath))) is not None
    if found:
        return None
    where = "" if os.sep in command else " on PATH"
    return ServerProblem(server.name, server.source, f"the program {command!r} was not found{where}")


def user_file_servers(env: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The `[mcpServers]` tables of the user config file, as written."""
    from agent_lsp.config.files import read_config_file, user_config_path

    data, _ = read_config_file(user_config_path(env))
    servers = data.get("mcpServers")
    return servers if isinstance(servers, dict) else {}
