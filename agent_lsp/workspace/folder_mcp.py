"""A workspace folder's MCP servers: which ones, the manager that runs them,
and their tools offered from a session's first request.

The servers are the folder's `.mcp.json`, the user's file and the `mcpServers`
setting, less those the managed policy does not allow (workspace/managed.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from agent_lsp.config import Settings
from agent_lsp.config.files import data_dir
from agent_lsp.config.policy import ManagedPolicy
from agent_lsp.mcp import McpManager, workspace_servers
from agent_lsp.mcp.config import user_file_servers
from agent_lsp.mcp.token_store import DIR_NAME as TOKEN_DIR_NAME
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.workspace.managed import allowed_servers

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.agent.ports import Editor
    from agent_lsp.workspace.permissions import PermissionPolicy


def folder_servers(root: Path, settings: Settings, env: Mapping[str, str], managed_policy: ManagedPolicy,
                   managed_policy_path: Path | None) -> tuple[list, list]:
    """The folder's servers as configured now, and the problems of bad entries."""
    servers, problems = workspace_servers(root, settings.mcp_servers, user_file_servers(env), env)
    servers, dropped = allowed_servers(managed_policy, managed_policy_path, servers)
    return servers, problems + dropped


def make_manager(servers: list, problems: list, *, root: Path, settings: Settings, env: Mapping[str, str],
                 editor: Editor, policy: PermissionPolicy) -> McpManager:
    mcp = settings.mcp
    return McpManager(
        servers, problems, root=root, editor=editor, policy=policy,
        tool_timeout_s=mcp.tool_timeout_seconds, connect_timeout_s=mcp.connect_timeout_seconds,
        max_output_chars=mcp.max_output_chars, first_step_wait_s=mcp.first_step_wait_seconds,
        elicitation_timeout_s=mcp.elicitation_timeout_seconds,
        token_dir=data_dir(env) / TOKEN_DIR_NAME,
        sandbox=mcp_sandbox(settings, root, env),
    )


def mcp_sandbox(settings: Settings, root: Path, env: Mapping[str, str]) -> SandboxPolicy | None:
    """Where stdio servers run: the commands' sandbox (the `shell` settings) under `mcp.sandbox`."""
    if settings.mcp.sandbox == "off":
        return None
    policy = SandboxPolicy.from_settings(settings.shell, [root], dict(env))
    return replace(policy, mode=settings.mcp.sandbox, mode_setting="mcp.sandbox")


def offer_tools(manager: McpManager, agent: Agent) -> None:
    """Start the folder's MCP servers with its first session; the session's first
    request waits (bounded) for those still starting, so it offers their tools."""
    if not manager.connections:
        return
    manager.start()
    waited = False

    async def assemble(payload: dict, next_: Callable) -> dict:
        nonlocal waited
        if not waited:
            waited = True
            await manager.wait_for_first_step()
            payload = {**payload, "tools": agent.tools.specs()}
        return await next_(payload)

    agent.hooks.register("system-prompt/assemble", assemble)
