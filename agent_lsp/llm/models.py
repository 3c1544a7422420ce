"""Known context windows and output limits of common models.

Looked up by the longest matching name prefix, so dated snapshots
(`claude-sonnet-4-5-20250929`, `gpt-4.1-mini-2025-04-14`) and router-style
names (`openai/gpt-4o`) resolve too. Settings override either figure.
"""

from __future__ import annotations

from .types import ModelInfo

# name prefix -> (context window, max output tokens)
KNOWN_MODELS: dict[str, tuple[int, int]] = {
    # Anthropic
    "claude-opus-4-5": (200_000, 64_000),
    "claude-opus-4-1": (200_000, 32_000),
    "claude-opus-4": (200_000, 32_000),
    "claude-sonnet-4-5": (200_000, 64_000),
    "claude-sonnet-4": (200_000, 64_000),
    "claude-haiku-4-5": (200_000, 64_000),
    "claude-3-7-sonnet": (200_000, 64_000),
    "claude-3-5-sonnet": (200_000, 8_192),
    "claude-3-5-haiku": (200_000, 8_192),
    "claude-3-opus": (200_000, 4_096),
    "claude-3-haiku": (200_000, 4_096),
    # OpenAI
    "gpt-5": (400_000, 128_000),
    "gpt-4.1": (1_047_576, 32_768),
    "gpt-4o": (128_000, 16_384),
    "gpt-4-turbo": (128_000, 4_096),
    "gpt-4": (8_192, 8_192),
    "gpt-3.5-turbo": (16_385, 4_096),
    "o1-mini": (128_000, 65_536),
    "o1": (200_000, 100_000),
    "o3": (200_000, 100_000),
    "o4-mini": (200_000, 100_000),
    # Others commonly reached through OpenAI-compatible endpoints
    "deepseek-chat": (128_000, 8_192),
    "deepseek-reasoner": (128_000, 64_000),
    "llama3.1": (128_000, 8_192),
    "llama3.2": (128_000, 8_192),
    "qwen2.5-coder": (32_768, 8_192),
    "qwen3": (40_960, 16_384),
}

# Only the ordered prefixes are consulted; longest first so "gpt-4o" wins over "gpt-4".
_PREFIXES = sorted(KNOWN_MODELS, key=len, reverse=True)


def known_model_info(model: str) -> ModelInfo:
    """The known limits of `model`, or an empty ModelInfo when unknown."""
    name = model.rsplit("/", 1)[-1].lower()  # "openai/gpt-4o" -> "gpt-4o"
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            window, output = KNOWN_MODELS[prefix]
            return ModelInfo(context_window=window, max_output_tokens=output)
    return ModelInfo()


def model_info(
    model: str, *, context_window: int | None = None, max_output_tokens: int | None = None
) -> ModelInfo:
    """Known limits with the configured overrides applied."""
    known = known_model_info(model)
    return ModelInfo(
        context_window=context_window or known.context_window,
        max_output_tokens=max_output_tokens or known.max_output_tokens,
    )
