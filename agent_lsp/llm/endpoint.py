"""Where a provider's endpoint, key and model name come from, as names a client can act on.

A failure message already says it in words ("the endpoint comes from
OPENAI_BASE_URL"); an editor also needs it as data, to offer the fix it
knows: VS Code maps an `AUTH` failure to its own "Set API Key…" command, a
`NETWORK` one to the setting named in `setting`. So every failure a provider
raises carries `url` (the endpoint asked) and, where one setting explains
it, `setting`: the environment variable or settings key to change
(`OPENAI_BASE_URL`, `model.baseUrl`, `ANTHROPIC_API_KEY`, `model.apiKey`,
`AGENT_LSP_MODEL`, `model.model`, …).
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import AUTH, MODEL_UNAVAILABLE, NETWORK, TIMEOUT, LlmError, LlmFailure

# The failures one setting explains, and which of the three it is.
_SETTING_OF_CODE = {NETWORK: "url", TIMEOUT: "url", AUTH: "key", MODEL_UNAVAILABLE: "model"}


@dataclass(frozen=True)
class Endpoint:
    url: str  # the provider's base URL
    url_setting: str = ""
    key_setting: str = ""
    model_setting: str = ""

    def annotate(self, error: LlmError) -> None:
        """Add `url` and (for the codes one setting explains) `setting` to the error's failure."""
        failure: LlmFailure = error.failure
        failure.setdefault("url", self.url)
        which = _SETTING_OF_CODE.get(failure.get("code", ""))
        setting = {"url": self.url_setting, "key": self.key_setting, "model": self.model_setting}.get(which or "")
        if setting:
            failure.setdefault("setting", setting)


__all__ = ["Endpoint"]
