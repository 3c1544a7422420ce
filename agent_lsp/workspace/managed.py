"""The managed policy applied to a workspace (the policy file: agent_lsp.config.policy.ManagedPolicy).

- Denied tools: every call of one is refused before anything else runs (user
  hooks and permission questions included), through a `tools/pre-execute`
  listener put first on each agent's bus; built-in tools it denies are also
  left out of the tool list, so the model is not offered them.
- Its permission rules come before the settings' rules and the remembered
  grants; a deny always wins in the permission policy, an ask cannot be
  answered "always".
- Project hooks and project MCP servers can be turned off: they are then not
  read at all (and so never asked about), and the problem lines say why.

Pinned model settings are applied by the settings layers themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from agent_lsp.agent import Agent
from agent_lsp.config.policy import ManagedPolicy
from agent_lsp.mcp.config import ServerConfig, ServerProblem
from agent_lsp.workspace.permissions import PermissionRule
from agent_lsp.workspace.project_settings import ProjectFile


def policy_permission_rules(policy: ManagedPolicy) -> list[PermissionRule]:
    rules = [PermissionRule(pattern, "deny") for pattern in policy.denied_tools]
    rules += [PermissionRule.from_json(rule.model_dump(by_alias=True, exclude_none=True)) for rule in policy.rules]
    return rules


def guard_denied_tools(agent: Agent, policy: ManagedPolicy, path: Path | None) -> None:
    if not policy.denied_tools:
        return

    async def guard(payload: dict[str, Any], next_: Callable) -> Any:
        if policy.denies_tool(payload["name"]):
            return {"kind": "deny", "reason": f"the managed policy ({path}) denies the tool {payload['name']}"}
        return await next_()

    agent.hooks.register("tools/pre-execute", guard, first=True)


def hook_files(policy: ManagedPolicy, path: Path | None, files: list[ProjectFile]) -> tuple[list[ProjectFile], list[str]]:
    """The project settings files whose hooks may be read, and a line when the policy drops them."""
    if policy.allow_project_hooks:
        return files, []
    dropped = [f.relative for f in files if "hooks" in f.data]
    return [], [f"hooks of {', '.join(dropped)}: {_turned_off('project hooks', path)}"] if dropped else []


def allowed_servers(policy: ManagedPolicy, path: Path | None,
                    servers: list[ServerConfig]) -> tuple[list[ServerConfig], list[ServerProblem]]:
    """The MCP servers that may start, and a problem for each project server the policy turns off."""
    if policy.allow_project_mcp_servers:
        return servers, []
    reason = _turned_off("project MCP servers", path)
    return [s for s in servers if not s.is_project], [ServerProblem(s.name, "project", reason) for s in servers if s.is_project]


def _turned_off(what: str, path: Path | None) -> str:
    return f"{what} are turned off by the managed policy ({path})"
