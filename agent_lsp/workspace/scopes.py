"""One merged view of what applies in a workspace, and where each value came from.

Scopes, lowest first: defaults, the user (config file, environment), the
editor (`initializationOptions`, `workspace/configuration`), the project
(its settings files, `.mcp.json`, skills folders), and the managed policy
above them all. `merged_view()` answers with the effective settings (each
value with the layer that set it), the permission rules, hooks, MCP servers
skills, sub-agent types and rules with their source, the memory file, and what the policy turned off. It reads what a
server started on the folder would read, but starts nothing. `agent-lsp
config show` prints it.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from agent_lsp.config.files import config_dir, user_config_path
from agent_lsp.config.layers import LAYER_ORDER, SettingsLayers
from agent_lsp.language import server_choices
from agent_lsp.mcp import workspace_servers
from agent_lsp.mcp.config import missing_program, user_file_servers
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.tools.memory import MEMORY_FILE, memory_path
from agent_lsp.tools.skills import load_skills, skill_folders
from agent_lsp.workspace.agent_types import agent_type_folders, load_agent_types
from agent_lsp.workspace.fixed_prompt import FixedPrompt, fixed_prompt_size
from agent_lsp.workspace.hook_config import workspace_hooks
from agent_lsp.workspace.project_settings import read_project_settings
from agent_lsp.workspace.rules import load_rules

# Shown in sections of their own, each entry with its source.
SECTIONED = ("hooks", "mcpServers", "permissions.rules", "languageServers")
_MASKED = "**********"  # how pydantic dumps a SecretStr


@dataclass
class Entry:
    name: str
    value: Any
    source: str
    note: str = ""


@dataclass
class MergedView:
    workspace: str
    policy: str | None
    sandbox: str = ""  # which sandbox the agent's commands run in here, or why none
    settings: list[Entry] = field(default_factory=list)
    permission_rules: list[Entry] = field(default_factory=list)
    hooks: list[Entry] = field(default_factory=list)
    mcp_servers: list[Entry] = field(default_factory=list)
    language_servers: list[Entry] = field(default_factory=list)
    skills: list[Entry] = field(default_factory=list)
    agent_types: list[Entry] = field(default_factory=list)
    rules: list[Entry] = field(default_factory=list)
    memory: str | None = None  # the memory file, when there is one
    fixed_prompt: FixedPrompt | None = None  # the size of what every request carries
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def merged_view(root: Path, env: Mapping[str, str] = os.environ, editor_settings: Mapping[str, Any] | None = None) -> MergedView:
    root = root.resolve()
    layers = SettingsLayers(env)
    problems = list(layers.problems)
    if editor_settings:
        problems += layers.set_layer("initializationOptions", dict(editor_settings), source="--settings")
    policy, policy_file = layers.policy, layers.policy_path
    sources = {
        "file": f"user config {user_config_path(env)}",
        "env": "environment",
        "initializationOptions": "editor settings",
        "workspace": "editor settings",
        "policy": f"managed policy {policy_file}",
    }
    view = MergedView(str(root), str(policy_file) if policy_file else None)
    view.sandbox = SandboxPolicy.from_settings(layers.current.shell, [root], dict(env)).describe()
    current = layers.current.model_dump(mode="json", by_alias=True)
    for name, value in _leaves(current):
        if name.startswith(SECTIONED):
            continue
        layer = next((n for n in reversed(LAYER_ORDER) if _has_path(layers.layer(n), name.split("."))), None)
        if value and (value == _MASKED or ".headers." in f".{name}."):  # SecretStr fields dump masked
            value = "(set, not shown)"
        view.settings.append(Entry(name, value, sources[layer] if layer else "default"))

    policy_source = sources["policy"]
    for pattern in policy.denied_tools:
        view.permission_rules.append(Entry(pattern, "deny", policy_source, "denied tool"))
    for rule in policy.rules:
        view.permission_rules.append(Entry(rule.tool, rule.action, policy_source, _rule_note(rule)))
    rules_layer = next((n for n in reversed(LAYER_ORDER) if _has_path(layers.layer(n), ["permissions", "rules"])), None)
    for rule in layers.current.permissions.rules:
        view.permission_rules.append(Entry(rule.tool, rule.action, sources.get(rules_layer or "", "default"), _rule_note(rule)))

    project_files, bad = read_project_settings(root)
    problems += bad
    commands, bad = workspace_hooks(layers.current.hooks, project_files)
    problems += bad
    for command in commands:
        off = command.is_project and not policy.allow_project_hooks
        note = "off: the managed policy forbids project hooks" if off else ("runs once trusted" if command.is_project else "")
        source = f"project {command.origin}" if command.is_project else "user or editor settings"
        matcher = f" ({command.matcher})" if command.matcher else ""
        view.hooks.append(Entry(f"{command.event}{matcher}", command.command, source, note))

    servers, server_problems = _servers(root, layers, env)
    problems += server_problems
    server_sources = {"user": sources["file"], "project": "project .mcp.json", "editor": "editor settings"}
    for server in servers:
        off = server.is_project and not policy.allow_project_mcp_servers
        note = "off: the managed policy forbids project servers" if off else ("starts once trusted" if server.is_project else "")
        view.mcp_servers.append(Entry(server.name, server.shown, server_sources[server.source], note))

    view.language_servers = _language_servers(layers, env, root)

    skills, bad = load_skills(skill_folders(root, config_dir(env), Path.home()))
    problems += bad
    for skill in skills.values():
        note = "off: the managed policy denies the skill tool" if policy.denies_tool("skill") else ""
        view.skills.append(Entry(skill.name, skill.description, f"{skill.source} {skill.path}", note))
    agent_types, bad = load_agent_types(agent_type_folders(root, config_dir(env), Path.home()))
    problems += bad
    for agent_type in agent_types.values():
        source = "project" if agent_type.path.is_relative_to(root) else "user"
        tools = ", ".join(agent_type.tools) if agent_type.tools is not None else "read-only tools"
        model = agent_type.model or "the parent's"
        note = ("off: the managed policy denies the subagent tool" if policy.denies_tool("subagent")
                else f"tools: {tools}; model: {model}")
        view.agent_types.append(Entry(agent_type.name, agent_type.description, f"{source} {agent_type.path}", note))
    rules, bad = load_rules(root)
    problems += bad
    for rule in rules:
        view.rules.append(Entry(rule.relative, ", ".join(rule.globs) or "every session", "project"))
    view.memory = str(memory_path(root)) if memory_path(root).is_file() else None
    try:
        view.fixed_prompt = fixed_prompt_size(root, layers.current, env)
    except Exception as error:  # the rest of the view is still worth showing
        problems.append(f"the fixed prompt could not be measured: {error}")
    view.problems = [str(p) for p in problems]
    return view


def mcp_problems(root: Path, env: Mapping[str, str] = os.environ,
                 editor_settings: Mapping[str, Any] | None = None) -> list[str]:
    """What is wrong with the workspace's MCP servers, one line each: an
    unreadable `.mcp.json`, a bad entry, a program that does not exist."""
    layers = SettingsLayers(env)
    if editor_settings:
        layers.set_layer("initializationOptions", dict(editor_settings), source="--settings")
    return _servers(root.resolve(), layers, env)[1]


def _servers(root: Path, layers: SettingsLayers, env: Mapping[str, str]) -> tuple[list[Any], list[str]]:
    servers, problems = workspace_servers(root, layers.current.mcp_servers, user_file_servers(env), env)
    missing = [missing_program(server, root, env) for server in servers]
    return servers, [str(p) for p in [*problems, *missing] if p is not None]


def format_view(view: MergedView) -> str:
    lines = [f"workspace: {view.workspace}", f"managed policy: {view.policy or 'none'}", f"sandbox: {view.sandbox}"]
    sections = [("settings", view.settings), ("permission rules", view.permission_rules), ("hooks", view.hooks),
                ("MCP servers", view.mcp_servers), ("language servers", view.language_servers), ("skills", view.skills),
                ("sub-agent types", view.agent_types), ("rules", view.rules)]
    for title, entries in sections:
        lines.append("")
        lines.append(f"{title}:" if entries else f"{title}: none")
        for entry in entries:
            value = entry.value if isinstance(entry.value, str) and title != "settings" else _show(entry.value)
            note = f"  [{entry.note}]" if entry.note else ""
            lines.append(f"  {entry.name} = {value}    # {entry.source}{note}")
    lines += ["", f"memory: {view.memory or f'none yet ({MEMORY_FILE} once the agent remembers something)'}"]
    if view.fixed_prompt is not None:
        lines += ["", *view.fixed_prompt.lines()]
    if view.problems:
        lines += ["", "problems:", *(f"  {p}" for p in view.problems)]
    return "\n".join(lines) + "\n"


def _language_servers(layers: SettingsLayers, env: Mapping[str, str], root: Path) -> list[Entry]:
    """Every language server the agent could run here: used (and where it runs), or why not."""
    from agent_lsp.language.confine import place_server

    settings = layers.current
    choices, problems = server_choices(settings.language, settings.language_servers, env.get("PATH"))
    policy = SandboxPolicy.from_settings(settings.shell, [root], dict(env))
    entries = [Entry(f"{c.spec.name} ({', '.join(sorted(c.spec.filetypes))})",
                     " ".join([c.spec.command, *c.spec.args]),
                     "user or editor settings" if c.spec.configured else "built-in",
                     (f"used: {c.why}; {place_server(policy, c.spec, c.executable, root).describe()}" if c.executable
                      else f"not used: {c.why}")
                     if settings.language.enabled else "off: language.enabled is false")
               for c in choices]
    return entries + [Entry("problem", p, "languageServers") for p in problems]


def _show(value: Any) -> str:
    import json

    return json.dumps(value)


def _rule_note(rule: Any) -> str:
    if rule.command_prefix:
        return f"commands starting with {rule.command_prefix!r}"
    if rule.path_glob:
        return f"paths matching {rule.path_glob!r}"
    return ""


def _leaves(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(data, dict) and data:
        out: list[tuple[str, Any]] = []
        for key, value in data.items():
            out += _leaves(value, f"{prefix}.{key}" if prefix else key)
        return out
    return [(prefix, data)]


def _has_path(layer: Mapping[str, Any], path: list[str]) -> bool:
    node: Any = layer
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return True
