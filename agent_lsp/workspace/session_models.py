"""Each session's model, switched mid-session, and the models to offer.

- `agent/session/setModel` appends a `session/model` event and points the
  live agent at the new provider and model from its next step on; an agent
  built later on the same log (a restart, new settings) starts on the last
  `session/model` of its log.
- `agent/model/list` offers the configured model (and its fallback) and what
  the endpoint lists, each listing kept for `LIST_TTL_S`; an endpoint that
  does not answer leaves the configured ones and a note.

Choosing the configured fallback (`model.fallback`) uses its settings, as the
automatic fallback does: its base URL, and the window its server reports. A
switch to another model of the configured provider keeps the endpoint, key
and headers; `contextWindow` and `maxOutputTokens` describe the configured
model, so another model goes by what its server reports or the table of
well-known models (`llm/models.py`), which compaction then uses. A switch to
another provider uses that provider's own key and base URL variables.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Mapping

from agent_lsp.config.environment import model_environment

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.llm.factory import ResolvedModel
    from agent_lsp.llm.settings import ModelSettings
    from agent_lsp.store.event_log import EventLog

log = logging.getLogger(__name__)

MODEL_EVENT = "session/model"
PROVIDERS = ("openai", "anthropic", "scripted")
EFFORTS = ("minimal", "low", "medium", "high")
LIST_TTL_S = 60.0
WINDOW_WAIT_S = 2.0  # how long the list waits for a local server to say its models' windows
MAX_WINDOW_PROBES = 16  # endpoint models asked for their window (a local server lists a few)


class ModelSwitchError(ValueError):
    """A switch that cannot be made; the message says why, for the user."""


def model_in(events: EventLog) -> dict[str, Any] | None:
    """The last `session/model` switch of a log, or None. Only the events held in
    memory are walked: a switch is never a chunk, and walking every event read
    the chunks of a long session back from its file (a third of reopening it)."""
    for event in events.held(reverse=True):
        if event.type == MODEL_EVENT:
            return dict(event.data)
    return None


class SessionModels:
    """`settings()` gives the model settings in force; `env` is where keys and
    endpoints are read (config.model_environment); `spawn` runs a replaced
    provider's closing in the background."""

    def __init__(self, settings: Callable[[], ModelSettings], env: Mapping[str, str],
                 spawn: Callable[[Coroutine[Any, Any, Any]], None]):
        self.settings = settings
        self.env = env
        self.spawn = spawn
        self._listings: dict[tuple[str, str], tuple[float, list[str]]] = {}  # (provider, base URL) -> (when, ids)
        # with no model name set, the one model the endpoint lists, once known (workspace/endpoint_model.py)
        self.unnamed: Callable[[], str | None] = lambda: None

    # ------------------------------------------------------------ switching

    def configured(self) -> tuple[str, str]:
        """(provider, model) the settings choose (with a base URL and no model name,
        the endpoint's one model once its list is in)."""
        from agent_lsp.llm.factory import chosen_model

        provider, model, _why = chosen_model(self.settings(), model_environment(self.env))
        return provider, self.unnamed() or model

    def _settings_for(self, provider: str, model: str) -> ModelSettings:
        from agent_lsp.llm.factory import fallback_settings

        base = self.settings()
        kind, configured_model = self.configured()
        if provider == kind and model == configured_model:
            if model == self.unnamed():  # no name set: the endpoint's one model, which the settings describe
                return base.model_copy(update={"model": model, "fallback": None})
            return base.model_copy(update={"fallback": None})
        fallback = fallback_settings(base, kind)
        if fallback is not None and provider == fallback.provider and model == fallback.model:
            return fallback  # the configured fallback: its own endpoint, key source and window
        update: dict[str, Any] = {"provider": provider, "model": model, "fallback": None,
                                  "context_window": None, "max_output_tokens": None}
        if provider != kind:  # the endpoint, key and body fields of the configured provider are not this one's
            update.update(base_url=None, api_key=None, headers={}, extra_body={}, prompt_cache_key=None)
        return base.model_copy(update=update)

    def resolve(self, provider: str, model: str) -> ResolvedModel:
        from agent_lsp.llm.factory import create_provider

        try:
            return create_provider(self._settings_for(provider, model), model_environment(self.env))
        except ValueError as error:
            raise ModelSwitchError(f"{provider} {model}: {error}") from None

    def set_model(self, agent: Agent, provider: str | None, model: str, effort: str | None) -> dict[str, Any]:
        """Switch the session to `model` (of `provider`, default: the session's
        provider) from its next step on, recorded in its log; returns the event's data."""
        provider = provider or self._kind_of(agent.options.provider)
        if provider not in PROVIDERS:
            raise ModelSwitchError(f"provider: unknown provider {provider!r} (one of {', '.join(PROVIDERS)})")
        if not model.strip():
            raise ModelSwitchError("model: an empty model name")
        if effort is not None and effort not in EFFORTS:
            raise ModelSwitchError(f"effort: {effort!r} is not one of {', '.join(EFFORTS)}")
        if effort is not None and provider == "anthropic":
            raise ModelSwitchError("effort: reasoning effort is sent to OpenAI-compatible endpoints only")
        previous = (agent.options.provider, agent.options.model)
        self._apply(agent, provider, model, effort)
        data = {"provider": provider, "model": model, "effort": effort,
                "previousProvider": previous[0], "previousModel": previous[1]}
        agent.session.append(MODEL_EVENT, {k: v for k, v in data.items() if v is not None})
        return data

    def restore(self, agent: Agent) -> None:
        """An agent built on a log that switched model starts on that model."""
        switch = model_in(agent.session.events)
        if switch is None:
            return
        try:
            self._apply(agent, str(switch["provider"]), str(switch["model"]), switch.get("effort"))
        except (ModelSwitchError, KeyError) as error:
            log.warning("session %s keeps the configured model: %s", agent.session_id, error)

    def _apply(self, agent: Agent, provider: str, model: str, effort: str | None) -> None:
        if provider == "scripted" and "scripted" in agent.providers:
            agent.switch_model("scripted", model, effort)  # a new one would start its script again
            return
        resolved = self.resolve(provider, model)
        replaced = agent.switch_model(resolved.provider_name, resolved.model, effort, resolved.provider)
        if replaced is not None:
            self._close_when_idle(agent, replaced)

    @staticmethod
    def _kind_of(provider_name: str) -> str:
        return provider_name.removesuffix("-fallback")

    def _close_when_idle(self, agent: Agent, provider: Any) -> None:
        """Close a replaced provider's connections once no step streams from it."""
        close = getattr(provider, "aclose", None)
        if close is None:
            return
        if agent.status == "idle":
            self.spawn(close())
            return

        def closed() -> None:
            agent.idle_listeners.remove(closed)
            self.spawn(close())

        agent.idle_listeners.append(closed)

    # -------------------------------------------------------------- listing

    async def list_models(self) -> tuple[list[dict[str, Any]], str | None]:
        """Models to offer ({provider, model, source, contextWindow?}) and a note
        when the endpoint's list is missing."""
        kind, configured_model = self.configured()
        offered: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()

        def offer(provider: str, model: str, source: str, window: int | None) -> None:
            if (provider, model) in seen:
                return
            seen.add((provider, model))
            entry: dict[str, Any] = {"provider": provider, "model": model, "source": source}
            if window:
                entry["contextWindow"] = window
            offered.append(entry)

        try:
            resolved = self.resolve(kind, configured_model)
        except ModelSwitchError as error:
            return [], str(error)
        try:
            offer(kind, resolved.model, "configured", await _window(resolved, resolved.model))
            fallback = self.settings().fallback
            if fallback is not None and fallback.model:
                offer(fallback.provider or kind, fallback.model, "configured", None)
            if kind == "scripted":
                return offered, None
            try:
                ids = await self._endpoint_models(kind, resolved)
            except Exception as error:  # ModelListError, or a provider without a listing
                return offered, f"the endpoint's model list is not available: {error}"
            windows = await asyncio.gather(*(_window(resolved, model) for model in ids[:MAX_WINDOW_PROBES]))
            for model, window in zip(ids, [*windows, *[None] * max(0, len(ids) - MAX_WINDOW_PROBES)]):
                offer(kind, model, "endpoint", window or _known_window(model))
            return offered, None
        finally:
            close = getattr(resolved.provider, "aclose", None)
            if close is not None:
                await close()

    async def _endpoint_models(self, kind: str, resolved: ResolvedModel) -> list[str]:
        key = (kind, str(getattr(resolved.provider, "base_url", "")))
        cached = self._listings.get(key)
        if cached is not None and time.monotonic() - cached[0] < LIST_TTL_S:
            return cached[1]
        ids = await resolved.provider.list_models()  # type: ignore[attr-defined]
        self._listings[key] = (time.monotonic(), ids)
        return ids


async def _window(resolved: "ResolvedModel", model: str) -> int | None:
    """The window of `model`: for the configured model its setting; what the
    server says it runs the model with (a local server is asked, at most
    `WINDOW_WAIT_S`); else the table of well-known models."""
    from agent_lsp.llm.models import known_model_info

    provider = resolved.provider
    try:
        if model == resolved.model and resolved.info.context_window and not getattr(provider, "windows", None):
            return resolved.info.context_window
        windows = getattr(provider, "windows", None)
        if windows is not None:
            said, _ = await windows.within(model, WINDOW_WAIT_S, shared=False)
            if said:
                return said
        if model == resolved.model:
            return provider.model_info(model).context_window
    except Exception:
        log.debug("the window of %s is not known", model, exc_info=True)
    return known_model_info(model).context_window


def _known_window(model: str) -> int | None:
    from agent_lsp.llm.models import known_model_info

    return known_model_info(model).context_window
