"""The model section of the settings: which provider, model and endpoint.

Wire names are camelCase (`baseUrl`, `apiKey`, `maxOutputTokens`, …) because
these settings arrive from editors as JSON; Python code uses snake_case.
The API key is a `SecretStr`: its repr and JSON dump are masked, so it never
lands in logs, session files or notifications by accident.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic.alias_generators import to_camel

ProviderChoice = Literal["auto", "openai", "anthropic", "scripted"]


class _CamelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class TimeoutSettings(_CamelModel):
    """Seconds. `first_byte` runs from sending the request to the first body
    byte; `idle` is the longest allowed gap between two network reads."""

    connect: float = Field(default=10.0, gt=0)
    first_byte: float = Field(default=180.0, gt=0)
    idle: float = Field(default=180.0, gt=0)


class FallbackSettings(_CamelModel):
    """A second model to use when the primary one is unavailable. Unset
    fields inherit the primary's (its key comes from the same env vars)."""

    provider: Literal["openai", "anthropic", "scripted"] | None = None
    model: str | None = None
    base_url: str | None = None


class PriceSettings(_CamelModel):
    """US dollars per million tokens; cache prices default to the input price."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


class ModelSettings(_CamelModel):
    provider: ProviderChoice = "auto"
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    api_key_source: str | None = Field(
        default=None,
        description="where the client keeps the key, in its own words (e.g. its own command); "
        "an authentication failure names it instead of model.apiKey",
    )
    base_url_source: str | None = Field(
        default=None,
        description="where the base URL is set, in words, when neither a setting nor a variable the user "
        "can change explains it (the managed policy file); failures about the endpoint name it",
    )
    headers: dict[str, str] = Field(default_factory=dict)
    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0)
    # Sampling and request fields, mostly for local servers, whose defaults let a
    # small model run a reply to the length limit.
    top_p: float | None = Field(default=None, gt=0, le=1)
    stop: list[str] = Field(default_factory=list, description="stop sequences")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="fields added to every request body as they are (null removes one)"
    )
    prompt_cache_key: bool | None = Field(
        default=None,
        description="send the session id as OpenAI's prompt_cache_key (default: only to api.openai.com)",
    )
    prices: dict[str, PriceSettings] = Field(
        default_factory=dict,
        description="price per million tokens by model-name prefix, for cost estimates (adds to the built-in list prices)",
    )
    images: bool | Literal["auto"] = Field(
        default="auto", description='whether the model takes images: true, false, or "auto" (all but known text-only models)')
    timeouts: TimeoutSettings = Field(default_factory=TimeoutSettings)
    fallback: FallbackSettings | None = None
    script: list[Any] | None = None  # replies of the scripted provider only


@dataclass(frozen=True)
class ModelEnvironment:
    """What the environment variables say about the model, as the config layer
    read them (`agent_lsp.config.environment.model_environment`); unset or blank ones are None.
    Keys are SecretStr, so a repr or log line never shows them."""

    provider: str | None = None  # AGENT_LSP_PROVIDER
    model: str | None = None  # AGENT_LSP_MODEL
    base_url: str | None = None  # AGENT_LSP_BASE_URL
    api_key: SecretStr | None = None  # AGENT_LSP_API_KEY
    provider_api_keys: Mapping[str, SecretStr] = field(default_factory=dict)  # "anthropic": ANTHROPIC_API_KEY, ...
    provider_base_urls: Mapping[str, str] = field(default_factory=dict)  # "openai": OPENAI_BASE_URL, ...
