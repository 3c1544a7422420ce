"""`SettingsLayers`: the settings of one server, its layers merged in order
(the package's docstring lists them) and validated, a bad key dropped from its
layer with a problem while every other key still applies."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from agent_lsp import secrets
from agent_lsp.config import Settings
from agent_lsp.config.checks import Problem, describe_invalid, drop_unknown_keys
from agent_lsp.config.environment import env_layer, model_environment
from agent_lsp.config.files import read_config_file, user_config_path
from agent_lsp.config.paths import deep_merge, drop_path, restore_path
from agent_lsp.config.policy import read_policy


LAYER_ORDER = ("file", "env", "initializationOptions", "workspace", "policy")


def configuration_errors(env: Mapping[str, str], settings: Mapping[str, Any] | None = None,
                         source: str = "initializationOptions") -> list[str]:
    """The errors (not the warnings) of the user's configuration: the config
    file, the environment and `settings` as a client would send them."""
    layers = SettingsLayers(env)
    problems = layers.problems + layers.set_layer("initializationOptions", settings or {}, source=source)
    errors = [p for p in problems if getattr(p, "severity", "error") == "error"]
    model_typos = [p for p in problems if p not in errors and 'unknown setting "model.' in str(p)]
    if model_typos and layers.current.model.provider == "auto":
        # A misspelt model key that leaves no model configured would end in the
        # scripted stand-in's canned answer: an error, not a warning, here.
        from agent_lsp.llm.factory import chosen_model

        try:
            provider = chosen_model(layers.current.model, model_environment(env))[0]
        except ValueError:  # a bad AGENT_LSP_PROVIDER: reported as such elsewhere
            provider = None
        if provider == "scripted":
            errors += [f"{p}, so no model is configured" for p in model_typos]
    return errors


class SettingsLayers:
    """The settings of one server: its layers, and the merged, validated result.

    `set_layer()` returns the problems found (readable, one per bad key); the
    bad keys are dropped from that layer so every other key still applies and
    the bad setting keeps its previous value."""

    def __init__(self, env: Mapping[str, str] = os.environ, config_file: Path | None = None):
        self._layers: dict[str, dict[str, Any]] = {name: {} for name in LAYER_ORDER}
        self.current = Settings()
        self.problems: list[str] = []
        secrets.register_env(env)
        path = config_file or user_config_path(env)
        data, problems = read_config_file(path, required=config_file is None and bool(env.get("AGENT_LSP_CONFIG")))
        self.problems += problems
        self.problems += self.set_layer("file", data, source=str(path))
        self.problems += self.set_layer("env", env_layer(env), source="environment")
        self.policy, self.policy_path, problems = read_policy(env)
        self.problems += problems
        if self.policy.model:
            pinned = dict(self.policy.model)
            pinned.setdefault("fallback", None)  # a fallback from another layer would leave the pinned model
            if pinned.get("baseUrl"):
                pinned["baseUrlSource"] = f"the managed policy {self.policy_path}"
            self.problems += self.set_layer("policy", {"model": pinned}, source=f"managed policy {self.policy_path}")

    def layer(self, name: str) -> dict[str, Any]:
        return copy.deepcopy(self._layers[name])

    def set_layer(self, name: str, data: Any, *, source: str | None = None) -> list[str]:
        if name not in self._layers:
            raise KeyError(name)
        source = source or name
        secrets.register_settings(data)  # before validation: a rejected value is still a secret
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            return [Problem(f"{source}: settings must be an object, got {type(data).__name__}")]
        candidate_layer = copy.deepcopy(dict(data))
        problems: list[str] = [Problem.warning(f"{source}: {m}") for m in drop_unknown_keys(candidate_layer)]
        for _ in range(50):  # each round drops at least one bad key
            layers = dict(self._layers, **{name: candidate_layer})
            merged: dict[str, Any] = {}
            for layer_name in LAYER_ORDER:
                merged = deep_merge(merged, layers[layer_name])
            try:
                settings = Settings.model_validate(merged)
            except ValidationError as error:
                dropped = False
                for item in error.errors():
                    loc = tuple(item["loc"])
                    if drop_path(candidate_layer, loc):
                        dropped = True
                        restore_path(candidate_layer, self._layers[name], loc)
                        problems.append(Problem(f"{source}: {describe_invalid(item)} (kept the previous value)"))
                if not dropped:  # the bad value came from another layer; leave this one unchanged
                    problems.append(Problem(f"{source}: {describe_invalid(error.errors()[0])}"))
                    return problems
                continue
            self._layers[name] = candidate_layer
            self.current = settings
            return problems
        return problems + [Problem(f"{source}: settings rejected")]
