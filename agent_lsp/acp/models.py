"""The session's model as an ACP config option (`category: "model"`).

The choices are the models the settings configure: the model and, when one
is set, the fallback model. Choosing one (`session/set_config_option`)
routes the session's next requests to it through the `agent/request` hook,
for this session and this process only; the settings stay as they are.
"""

from __future__ import annotations

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from agent_lsp.agent import Agent

MODEL_OPTION = "model"


def model_choices(agent: Agent) -> dict[str, tuple[str, str]]:
    """value -> (provider, model), the configured model first."""
    options = agent.options
    choices = {f"{options.provider}/{options.model}": (options.provider, options.model)}
    if options.fallback_provider or options.fallback_model:
        provider = options.fallback_provider or options.provider
        model = options.fallback_model or options.model
        choices.setdefault(f"{provider}/{model}", (provider, model))
    return choices


class ModelChoice:
    """One session's chosen model."""

    def __init__(self, agent: Agent):
        self.agent = agent
        self.choices = model_choices(agent)
        self.configured = self.current = next(iter(self.choices))
        agent.hooks.register("agent/request", self._route)

    def option(self) -> SessionConfigOptionSelect:
        return SessionConfigOptionSelect(
            id=MODEL_OPTION, name="Model", category="model", type="select", current_value=self.current,
            options=[SessionConfigSelectOption(value=value, name=model, description=f"{provider} (from the settings)")
                     for value, (provider, model) in self.choices.items()],
        )

    def choose(self, value: str) -> bool:
        if value not in self.choices:
            return False
        self.current = value
        return True

    async def _route(self, payload: dict, next_) -> dict:
        config = await next_(payload)
        if self.current == self.configured:
            return config  # the settings' route (and the fallback the loop may switch to)
        provider, model = self.choices[self.current]
        return {**config, "provider": provider, "model": model}
