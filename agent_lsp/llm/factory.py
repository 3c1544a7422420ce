"""Settings + environment (as the config layer read it) -> the model provider to use.

Explicit settings win over env vars; the generic `AGENT_LSP_*` vars win over
the conventional per-provider ones (`ANTHROPIC_*`, `OPENAI_*`). With no
provider configured ("auto"): Anthropic if its key is set, else OpenAI if its
key is set, else an OpenAI-compatible endpoint if only a base URL is set (a
local server such as Ollama needs no key), else the scripted model. The
choice and its reason are in `ResolvedModel.description` (for the log and
the status); the API key never is.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace

from . import models
from .endpoint import Endpoint
from .prices import PriceTable, price_table
from .settings import ModelEnvironment, ModelSettings
from .types import ModelInfo, ModelProvider

log = logging.getLogger(__name__)

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1", "scripted": "scripted"}
_KEY_VARS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
_URL_VARS = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}


@dataclass(frozen=True)
class ResolvedModel:
    provider: ModelProvider
    provider_name: str  # the key under which the agent finds `provider`
    model: str
    info: ModelInfo
    description: str  # e.g. "anthropic claude-sonnet-4-5 (auto: ANTHROPIC_API_KEY is set)"; no secrets
    fallback: "ResolvedModel | None" = None
    prices: PriceTable = field(default_factory=PriceTable)  # for cost estimates: defaults + the model.prices setting


def _choose_provider(settings: ModelSettings, env: ModelEnvironment) -> tuple[str, str]:
    """(provider, why)."""
    if settings.provider != "auto":
        return settings.provider, "configured"
    if env.provider:
        named = env.provider.lower()
        if named not in ("openai", "anthropic", "scripted"):
            raise ValueError(f"AGENT_LSP_PROVIDER must be openai, anthropic or scripted, not {named!r}")
        return named, "AGENT_LSP_PROVIDER"
    if "anthropic" in env.provider_api_keys:
        return "anthropic", "auto: ANTHROPIC_API_KEY is set"
    if "openai" in env.provider_api_keys:
        return "openai", "auto: OPENAI_API_KEY is set"
    if settings.base_url or env.base_url or "openai" in env.provider_base_urls:
        return "openai", "auto: an OpenAI-compatible base URL is set"
    if "anthropic" in env.provider_base_urls:
        return "anthropic", "auto: ANTHROPIC_BASE_URL is set"
    return "scripted", "auto: no API key set (ANTHROPIC_API_KEY or OPENAI_API_KEY); using the scripted demo model"


def chosen_model(settings: ModelSettings, env: ModelEnvironment) -> tuple[str, str, str]:
    """(provider, model, why) the settings and env vars choose, without building
    the provider. Nothing configured: ("scripted", "scripted", "auto: ...")."""
    provider_name, why = _choose_provider(settings, env)
    return provider_name, settings.model or env.model or DEFAULT_MODELS[provider_name], why


def _api_key(provider: str, settings: ModelSettings, env: ModelEnvironment) -> tuple[str | None, str]:
    """(key, where it comes from: the name the user should fix)."""
    if settings.api_key is not None and settings.api_key.get_secret_value():
        return settings.api_key.get_secret_value(), "the model.apiKey setting"
    if env.api_key is not None:
        return env.api_key.get_secret_value(), "AGENT_LSP_API_KEY"
    key = env.provider_api_keys.get(provider)
    return (key.get_secret_value() if key else None), _KEY_VARS[provider]


def _base_url(provider: str, settings: ModelSettings, env: ModelEnvironment) -> tuple[str, str]:
    """(base URL, where it comes from: the name the user should change)."""
    if settings.base_url and settings.base_url_source:  # pinned by the managed policy
        return settings.base_url, settings.base_url_source
    if settings.base_url:  # AGENT_LSP_BASE_URL arrives as this setting
        same = settings.base_url == env.base_url
        return settings.base_url, "AGENT_LSP_BASE_URL" if same else "the model.baseUrl setting"
    if env.base_url:
        return env.base_url, "AGENT_LSP_BASE_URL"
    if env.provider_base_urls.get(provider):
        return env.provider_base_urls[provider], _URL_VARS[provider]
    return _provider_module(provider).DEFAULT_BASE_URL, f"the default (set {_URL_VARS[provider]} or model.baseUrl for another)"


def _model_source(settings: ModelSettings, env: ModelEnvironment, why: str) -> str:
    if why == "fallback":
        return "the model.fallback.model setting"
    if env.model and settings.model in (None, env.model):
        return "AGENT_LSP_MODEL"  # it arrives as the model.model setting
    if settings.model:
        return "the model.model setting"
    return "the default (set AGENT_LSP_MODEL or model.model to one the server has)"


def _setting_name(source: str, default: str) -> str:
    """The machine-readable name in a source phrase: "the model.apiKey setting" ->
    "model.apiKey", "OPENAI_BASE_URL" -> itself; a default -> `default`."""
    named = re.fullmatch(r"the (model\.[\w.]+) setting", source)
    if named:
        return named.group(1)
    return source if re.fullmatch(r"[A-Z][A-Z0-9_]*", source) else default


def _auth_hint(provider: str, key_source: str, has_key: bool, base_url: str, client_source: str | None) -> str:
    """What to fix, naming the endpoint that refused and where the key comes from
    (in the client's own words when it said where it keeps keys)."""
    if has_key:
        if client_source and key_source == "the model.apiKey setting":
            key_source = client_source
        return f"{base_url} refused the key; check the API key in {key_source}"
    if client_source:
        return f"{base_url} needs an API key: set one with {client_source}, or set {_KEY_VARS[provider]}"
    return f"{base_url} needs an API key: set {_KEY_VARS[provider]} (or AGENT_LSP_API_KEY, or the model.apiKey setting)"


def create_provider(settings: ModelSettings, env: ModelEnvironment) -> ResolvedModel:
    """Build the provider the settings and env vars ask for (see module doc).
    Raises ValueError on an unusable configuration (e.g. an unknown
    AGENT_LSP_PROVIDER)."""
    provider_name, why = _choose_provider(settings, env)
    resolved = _build(settings, env, provider_name, why, name=provider_name)
    fb_settings = fallback_settings(settings, provider_name)
    if fb_settings is not None:
        fb_provider = fb_settings.provider
        # Same kind of provider at another endpoint or model: a distinct name for the agent's map.
        name = fb_provider if fb_provider != provider_name else f"{fb_provider}-fallback"
        fallback = _build(fb_settings, env, fb_provider, "fallback", name=name)
        resolved = ResolvedModel(
            resolved.provider, resolved.provider_name, resolved.model, resolved.info,
            f"{resolved.description}; fallback {fallback.description}", fallback,
        )
    log.info("model: %s", resolved.description)
    return replace(resolved, prices=price_table(settings.prices))


def fallback_settings(settings: ModelSettings, provider_name: str) -> ModelSettings | None:
    """The model settings of the configured fallback (`model.fallback`), or None:
    its provider, model and base URL, the rest inherited from the primary's
    (its key comes from the same settings and variables). The primary's
    `contextWindow` and `maxOutputTokens` describe the primary's model, so
    another model or endpoint goes by what its server reports or the table
    of well-known models. `provider_name` is the primary's chosen provider."""
    fb = settings.fallback
    if fb is None or not (fb.provider or fb.model):
        return None
    fb_provider = fb.provider or provider_name
    same = fb_provider == provider_name
    model = fb.model or (settings.model if same else None)
    base_url = fb.base_url or (settings.base_url if same else None)
    update: dict[str, object] = {"provider": fb_provider, "model": model, "base_url": base_url, "fallback": None}
    if not same or model != settings.model or base_url != settings.base_url:
        update.update(context_window=None, max_output_tokens=None)
    return settings.model_copy(update=update)


def _provider_module(provider_name: str):
    """The provider's module, imported when it is used (httpx comes later, with
    its first request); the scripted model needs neither."""
    if provider_name == "anthropic":
        from . import anthropic

        return anthropic
    from . import openai

    return openai


def _build(settings: ModelSettings, env: ModelEnvironment, provider_name: str, why: str, *, name: str) -> ResolvedModel:
    model = settings.model or env.model or DEFAULT_MODELS[provider_name]
    if provider_name == "scripted":
        from agent_lsp.llm.scripted import ScriptedProvider

        provider = ScriptedProvider(settings.script, name=name)
        info = models.model_info(model, context_window=settings.context_window, max_output_tokens=settings.max_output_tokens)
        if info.context_window is None:
            info = provider.model_info(model)
        return ResolvedModel(provider, name, model, info, f"scripted model ({why})")

    from .transport import Timeouts

    base_url, url_source = _base_url(provider_name, settings, env)
    key, key_source = _api_key(provider_name, settings, env)
    t = settings.timeouts
    model_source = _model_source(settings, env, why)
    endpoint = Endpoint(
        base_url,
        url_setting=_setting_name(url_source, "model.baseUrl"),
        key_setting=_setting_name(key_source, _KEY_VARS[provider_name]),
        model_setting=_setting_name(model_source, "model.model"),
    )
    common = dict(
        base_url=base_url,
        api_key=key,
        name=name,
        headers=dict(settings.headers),
        timeouts=Timeouts(connect=t.connect, first_byte=t.first_byte, idle=t.idle),
        auth_hint=_auth_hint(provider_name, key_source, key is not None, base_url, settings.api_key_source),
        endpoint_hint=f"the endpoint comes from {url_source}",
        model_hint=f"comes from {model_source}",
        endpoint=endpoint,
        context_window=settings.context_window,
        max_output_tokens=settings.max_output_tokens,
        top_p=settings.top_p,
        stop=settings.stop,
        extra_body=settings.extra_body,
    )
    module = _provider_module(provider_name)
    if provider_name == "anthropic":
        provider: ModelProvider = module.AnthropicProvider(**common)  # type: ignore[arg-type]
    else:
        provider = module.OpenAIProvider(**common, prompt_cache_key=settings.prompt_cache_key)  # type: ignore[arg-type]
    info = provider.model_info(model)
    key_note = f"key from {key_source}" if key else "no API key"
    description = f"{provider_name} {model} at {base_url} ({why}; {key_note})"
    return ResolvedModel(provider, name, model, info, description)
