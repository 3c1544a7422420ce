"""The session's model as an ACP config option (`category: "model"`).

ACP v1 (the schema of the `acp` library) has one way to offer models, a
`select` config option set with `session/set_config_option`. The choices
are those `agent/model/list` offers over LSP (workspace/session_models.py):
the configured model, its fallback, and the models the endpoint lists. The
`session/new` / `session/load` answer offers the configured ones at once
(the endpoint is not asked before the answer); once the endpoint's list is
in, a `config_option_update` offers all of them. Values are
`provider/model`; the session's current model is always one of them.

Choosing one switches the session exactly as `agent/session/setModel`
does: a `session/model` event in its log, in effect from its next step, kept
when the session is loaded again by either face.

With no model configured (no settings, no key in the environment the client
gave the agent), the built-in scripted demo model answers: the option says
so and how to set one, and so does the session's first answer (`NO_MODEL`).
"""

from __future__ import annotations

from typing import Any

from acp.schema import ConfigOptionUpdate, SessionConfigOptionSelect, SessionConfigSelectOption

from agent_lsp.agent import Agent
from agent_lsp.config.environment import model_environment
from agent_lsp.config.files import user_config_path
from agent_lsp.llm.factory import chosen_model
from agent_lsp.workspace.host import WorkspaceHost

MODEL_OPTION = "model"


def no_model_notice(host: WorkspaceHost) -> str:
    """What the user reads when no model is configured: that the answers are canned, and how to set one."""
    return ("No model is configured, so agent_lsp's built-in scripted demo model answers (its replies are "
            "canned, not a real model's). To use a real model, give the agent an API key in the environment "
            "your client starts it with (ANTHROPIC_API_KEY or OPENAI_API_KEY; AGENT_LSP_PROVIDER, "
            "AGENT_LSP_MODEL and AGENT_LSP_BASE_URL choose the provider, the model and an OpenAI-compatible "
            f"server), or write a [model] section in {user_config_path(host.env)}.")


class ModelChoice:
    """One session's model option."""

    def __init__(self, host: WorkspaceHost, agent: Agent):
        self.host = host
        self.agent = agent
        provider, model = host.models.configured()
        self.offered: dict[str, dict[str, Any]] = {}  # value -> {provider, model, source}
        self._offer({"provider": provider, "model": model, "source": "configured"})
        fallback = host.settings.model.fallback
        if fallback is not None and fallback.model:
            self._offer({"provider": fallback.provider or provider, "model": fallback.model, "source": "configured"})
        try:
            _provider, _model, why = chosen_model(host.settings.model, model_environment(host.env))
        except ValueError:
            why = ""
        self.demo_value = f"{provider}/{model}" if provider == "scripted" and why.startswith("auto") else None
        self.warned = False

    @property
    def demo(self) -> bool:
        """The session's model is the scripted demo model, because no model is configured."""
        return self.demo_value is not None and self.current == self.demo_value

    def _offer(self, entry: dict[str, Any]) -> None:
        self.offered.setdefault(f"{entry['provider']}/{entry['model']}", entry)

    @property
    def current(self) -> str:
        return f"{self.agent.options.provider.removesuffix('-fallback')}/{self.agent.options.model}"

    def option(self) -> SessionConfigOptionSelect:
        choices = dict(self.offered)
        if self.current not in choices:  # a model switched to earlier that is not offered now
            provider, _, model = self.current.partition("/")
            choices[self.current] = {"provider": provider, "model": model, "source": "session"}
        return SessionConfigOptionSelect(
            id=MODEL_OPTION, name="Model", category="model", type="select", current_value=self.current,
            options=[SessionConfigSelectOption(value=value, name=entry["model"],
                                               description=f"{entry['provider']} ({_SOURCES[entry['source']]})")
                     if value != self.demo_value else
                     SessionConfigSelectOption(value=value, name="scripted demo (no model configured)",
                                               description=no_model_notice(self.host))
                     for value, entry in choices.items()],
        )

    async def listed(self) -> ConfigOptionUpdate | None:
        """The option with every model `agent/model/list` offers, when that adds some."""
        models, _note = await self.host.models.list_models()
        before = set(self.offered)
        for entry in models:
            self._offer(entry)
        if set(self.offered) == before:
            return None
        return ConfigOptionUpdate(session_update="config_option_update", config_options=[self.option()])

    def choose(self, value: str) -> None:
        """Switch the session to `value`; KeyError when it is not offered, ModelSwitchError when it cannot run."""
        entry = self.offered[value] if value != self.current else None
        if entry is not None:
            self.host.models.set_model(self.agent, entry["provider"], entry["model"], None)


_SOURCES = {"configured": "from the settings", "endpoint": "listed by the endpoint", "session": "this session's"}
