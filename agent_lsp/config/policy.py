"""The managed policy: the system-wide file an administrator installs, which
denies tools, adds permission rules first and pins model settings; nothing in
the user's, the project's or the editor's settings loosens it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import Field, ValidationError

from agent_lsp.config import PermissionRuleSettings, SettingsModel
from agent_lsp.config.checks import Problem, describe_invalid
from agent_lsp.config.files import APP_DIR_NAME, read_config_file


class PolicyRuleSettings(PermissionRuleSettings):
    action: Literal["ask", "deny"]  # a policy tightens; what it does not deny stays the user's to decide


class ManagedPolicy(SettingsModel):
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
