"""What a folder's settings make, each from the values it uses: the
permission policy (the user's rules after the managed policy's), the user and
project hooks, and an agent's options and model providers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Mapping, TYPE_CHECKING, Any, Callable

from agent_lsp.agent import AgentOptions
from agent_lsp.agent.ports import Editor
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.tools import CommandEnvPolicy
from agent_lsp.workspace.hook_config import workspace_hooks
from agent_lsp.workspace.managed import hook_files, policy_permission_rules
from agent_lsp.workspace.permissions import PermissionPolicy, PermissionRule
from agent_lsp.workspace.project_settings import read_project_settings
from agent_lsp.workspace.user_hooks import UserHooks

if TYPE_CHECKING:
    from agent_lsp.config import PermissionSettings, Settings
    from agent_lsp.config.policy import ManagedPolicy
    from agent_lsp.llm.factory import ResolvedModel

log = logging.getLogger(__name__)


def permission_policy(permissions: PermissionSettings, managed_policy: ManagedPolicy, managed_policy_path: Path | None,
                      answers_file: Path, root: Path, mode_of: Callable[[str], str]) -> PermissionPolicy:
    """The folder's permission policy; "always" answers are kept in `answers_file`,
    `mode_of(session_id)` is the session's mode (plan mode refuses edits and commands)."""
    managed = policy_permission_rules(managed_policy)
    managed_source = f"the managed policy {managed_policy_path}"
    policy = PermissionPolicy(
        answers_file,
        roots=[root],
        rules=managed
        + [PermissionRule.from_json(rule.model_dump(by_alias=True, exclude_none=True)) for rule in permissions.rules],
        rule_sources=[("policy", managed_source)] * len(managed),
        defaults=dict(permissions.defaults),
        ask_timeout_s=permissions.ask_timeout_seconds,
        sandboxed_commands=permissions.sandboxed_commands,
    )
    policy.mode_of = mode_of  # plan mode refuses edits and commands
    return policy


def folder_hooks(root: Path, settings: Settings, managed_policy: ManagedPolicy, managed_policy_path: Path | None, *,
                 editor: Editor, policy: PermissionPolicy, transcript_of: Callable[[str], Path],
                 sandbox: SandboxPolicy, env: Mapping[str, str] | None = None) -> UserHooks:
    """The user's hooks (settings) and the project's (its settings files, as the
    managed policy allows), their problems logged."""
    project_files, problems = read_project_settings(root)
    project_files, dropped = hook_files(managed_policy, managed_policy_path, project_files)
    commands, bad = workspace_hooks(settings.hooks, project_files)
    for problem in problems + dropped + bad:
        log.warning("hooks: %s", problem)
    shell = settings.shell
    return UserHooks(commands, root=root, editor=editor, policy=policy,
                     transcript_of=transcript_of,
                     env_policy=CommandEnvPolicy(shell.inherit, tuple(shell.pass_env), env),
                     sandbox=sandbox)


def model_providers(resolved: ResolvedModel) -> dict[str, Any]:
    """The providers an agent on `resolved` calls, by name: its model's and its fallback's."""
    providers = {resolved.provider_name: resolved.provider}
    if resolved.fallback is not None:
        providers[resolved.fallback.provider_name] = resolved.fallback.provider
    return providers


def agent_options(resolved: ResolvedModel, settings: Settings, *, system_prompt: Any,
                  runtime_context: Callable[[], str | None]) -> AgentOptions:
    """An agent's options: the resolved model (and fallback), the settings' limits."""
    return AgentOptions(
        provider=resolved.provider_name,
        model=resolved.model,
        system_prompt=system_prompt,
        runtime_context=runtime_context,
        cost_estimate=resolved.prices.cost_usd,
        max_tokens=settings.model.max_output_tokens,
        temperature=settings.model.temperature,
        max_parallel_tool_calls=settings.max_parallel_tool_calls,
        cancel_grace_s=settings.cancel_grace_s,
        fallback_provider=resolved.fallback.provider_name if resolved.fallback else None,
        fallback_model=resolved.fallback.model if resolved.fallback else None,
    )
