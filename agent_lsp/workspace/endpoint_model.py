"""The model to use when only a model server's base URL is set.

A local OpenAI-compatible server (llama.cpp, LM Studio, Ollama) is often set
up with its base URL alone; the default model name (`gpt-4.1`) is then not
one it serves, and a server that checks names rejects every request. When
no model name is set (neither `model.model` nor `AGENT_LSP_MODEL`) and a
base URL is, the endpoint's model list (`GET <base>/models`, asked once per
folder and configuration, in the background as the server opens the
folder) decides:

- it names exactly one model: a session on the default name switches to it
  at its first step, as a user's switch does (a `session/model` event the
  clients show; a session loaded later keeps it), and so do `agent-lsp
  run` and `chat`, whose sessions are the server's;
- it names several, the default not among them, and no API key is set (a
  local server): the step is refused before anything is sent, with an error
  that names them and says how to choose (an endpoint with a key is left to
  answer for itself: a service may take names it does not list, and its
  "model not found" is given the names it lists);
- otherwise (no answer, no models, or the default listed): nothing changes.

A session's first step waits for the list at most `LIST_WAIT_S`; a list that
comes later applies from the next step.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable, Mapping

from agent_lsp.config.environment import model_environment
from agent_lsp.llm.types import MODEL_UNAVAILABLE, LlmError
from agent_lsp.workspace.session_models import model_in

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.llm.settings import ModelSettings
    from agent_lsp.workspace.session_models import SessionModels

log = logging.getLogger(__name__)

LIST_WAIT_S = 2.0  # a session's first step waits this long for the endpoint's list
SHOWN = 10  # models named in the error when there are several


class EndpointModel:
    """`models` switches a session's model; `settings()` and `env` say whether a
    model name is set."""

    def __init__(self, models: SessionModels, settings: Callable[[], ModelSettings], env: Mapping[str, str]):
        self._models = models
        self._settings = settings
        self._env = env
        self._key: tuple[Any, ...] | None = None  # the configuration the listing is for
        self._listing: asyncio.Task[list[str] | None] | None = None
        self._waited: set[str] = set()  # sessions whose first step waited for the list
        models.unnamed = self.chosen

    def unset(self) -> tuple[str, str, str] | None:
        """(provider, default model, setting to name) when a base URL is set but no model name; else None."""
        from agent_lsp.llm.factory import chosen_model

        settings, env = self._settings(), model_environment(self._env)
        if settings.model or env.model:
            return None
        try:
            kind, model, _why = chosen_model(settings, env)
        except ValueError:
            return None
        if kind not in ("openai", "anthropic"):
            return None
        if not (settings.base_url or env.base_url or env.provider_base_urls.get(kind)):
            return None
        from_env = not settings.base_url or settings.base_url == env.base_url  # AGENT_LSP_BASE_URL arrives as the setting
        return kind, model, "AGENT_LSP_MODEL" if from_env else "model.model"

    def _keyed(self, kind: str) -> bool:
        settings, env = self._settings(), model_environment(self._env)
        return bool(settings.api_key and settings.api_key.get_secret_value()) or env.api_key is not None \
            or kind in env.provider_api_keys

    def _wanted(self) -> tuple[tuple[str, str, str], tuple[Any, ...]] | None:
        """(what `unset` says, the configuration a listing is for), or None."""
        wanted = self.unset()
        if wanted is None:
            return None
        settings, env = self._settings(), model_environment(self._env)
        return wanted, (wanted, settings.base_url, env.base_url, tuple(sorted(env.provider_base_urls.items())))

    def start(self) -> asyncio.Task[list[str] | None] | None:
        """Ask the endpoint for its models in the background, once per configuration
        (from the event loop); the listing under way or done, or None when not needed."""
        found = self._wanted()
        if found is None:
            return None
        (kind, default, _setting), key = found
        if key != self._key or self._listing is None:
            self._key = key
            self._listing = asyncio.ensure_future(self._list(kind, default))
        return self._listing

    def chosen(self) -> str | None:
        """The endpoint's one model, when no name is set and its list is in."""
        found = self._wanted()
        listing = self._listing
        if found is None or found[1] != self._key or listing is None or not listing.done():
            return None
        if listing.cancelled() or listing.exception() is not None:
            return None
        listed = listing.result()
        return listed[0] if listed and len(listed) == 1 and listed[0] != found[0][1] else None

    async def _list(self, kind: str, model: str) -> list[str] | None:
        try:
            resolved = self._models.resolve(kind, model)
        except ValueError as error:
            log.debug("no model list: %s", error)
            return None
        try:
            return await resolved.provider.list_models()  # type: ignore[attr-defined]
        except Exception as error:  # ModelListError: the request says what is wrong
            log.info("the endpoint's model list is not available: %s", error)
            return None
        finally:
            close = getattr(resolved.provider, "aclose", None)
            if close is not None:
                await close()

    async def stop(self) -> None:
        listing, self._listing = self._listing, None
        if listing is not None and not listing.done():
            listing.cancel()
            await asyncio.gather(listing, return_exceptions=True)

    def attach(self, agent: Agent) -> None:
        """Choose the model at each step of `agent`, before anything else of the step."""

        async def assemble(payload: dict[str, Any], next_: Callable) -> Any:
            await self.choose(agent)
            return await next_(payload)

        agent.hooks.register("system-prompt/assemble", assemble, first=True)

    async def choose(self, agent: Agent) -> None:
        wanted = self.unset()
        if wanted is None:
            return
        kind, default, setting = wanted
        if agent.options.provider != kind or agent.options.model != default or model_in(agent.session.events):
            return  # another model, or one the user chose
        listing = self.start()
        if listing is None:
            return
        if not listing.done() and agent.session_id not in self._waited:
            self._waited.add(agent.session_id)
            try:
                await asyncio.wait_for(asyncio.shield(listing), LIST_WAIT_S)
            except (asyncio.TimeoutError, TimeoutError):
                log.info("the endpoint has not listed its models yet; going on with %s", default)
        if not listing.done() or listing.cancelled() or listing.exception() is not None:
            return
        listed = listing.result()
        if not listed or default in listed:
            return
        url = str(getattr(agent.providers.get(agent.options.provider), "base_url", "the endpoint"))
        if len(listed) == 1:
            log.info("no model name is set and %s lists one model: using %s", url, listed[0])
            self._models.set_model(agent, kind, listed[0], None)
            return
        if self._keyed(kind):
            return
        shown = ", ".join(listed[:SHOWN]) + (f" and {len(listed) - SHOWN} more" if len(listed) > SHOWN else "")
        raise LlmError({
            "code": MODEL_UNAVAILABLE, "provider": agent.options.provider, "model": default, "url": url,
            "setting": setting, "retryable": False,
            "message": (f"No model name is set, and {url} serves several models: {shown}. Choose one with "
                        f"{_how(setting)}, or with your editor's model picker."),
        })


def _how(setting: str) -> str:
    if setting == "AGENT_LSP_MODEL":
        return "AGENT_LSP_MODEL=<name> (or the model.model setting)"
    return "the model.model setting (or AGENT_LSP_MODEL=<name>)"
