"""The environment variables that carry settings (`ENV_VARS`, as a layer) and
those that choose and reach the model (`model_environment`)."""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import SecretStr

from agent_lsp.config.paths import set_path
from agent_lsp.llm.settings import ModelEnvironment


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


def env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for name, path in ENV_VARS.items():
        value = env.get(name)
        if value:
            set_path(layer, path, value.lower() if name == "AGENT_LSP_LOG_LEVEL" else value)
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
