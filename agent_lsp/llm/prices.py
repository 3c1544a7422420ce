"""What a model's tokens cost: a price table and the estimate of a usage's cost.

Prices are US dollars per million tokens, looked up by the longest matching
model-name prefix (as `models.py` does for context windows), so dated
snapshots and router-style names (`openai/gpt-4.1`) resolve too. The defaults
are list prices of well-known models when this table was written; providers
change them, discounts and batch prices are not known here, so every figure
computed from them is an estimate, labelled as such wherever it is shown.
The `model.prices` setting adds or overrides entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .types import Usage


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens. `cache_read`/`cache_write` default to `input`."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


# name prefix -> list price (USD per million tokens)
DEFAULT_PRICES: dict[str, Price] = {
    # Anthropic: cache reads 0.1x input, cache writes (5 minutes) 1.25x input
    "claude-opus-4-5": Price(5.0, 25.0, 0.5, 6.25),
    "claude-opus-4": Price(15.0, 75.0, 1.5, 18.75),
    "claude-sonnet-4": Price(3.0, 15.0, 0.3, 3.75),
    "claude-3-7-sonnet": Price(3.0, 15.0, 0.3, 3.75),
    "claude-3-5-sonnet": Price(3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": Price(0.8, 4.0, 0.08, 1.0),
    # OpenAI: cached input at its discounted price, no charge for writing the cache
    "gpt-5-mini": Price(0.25, 2.0, 0.025, 0.25),
    "gpt-5-nano": Price(0.05, 0.4, 0.005, 0.05),
    "gpt-5": Price(1.25, 10.0, 0.125, 1.25),
    "gpt-4.1-mini": Price(0.4, 1.6, 0.1, 0.4),
    "gpt-4.1-nano": Price(0.1, 0.4, 0.025, 0.1),
    "gpt-4.1": Price(2.0, 8.0, 0.5, 2.0),
    "gpt-4o-mini": Price(0.15, 0.6, 0.075, 0.15),
    "gpt-4o": Price(2.5, 10.0, 1.25, 2.5),
    "o4-mini": Price(1.1, 4.4, 0.275, 1.1),
    "o3": Price(2.0, 8.0, 0.5, 2.0),
    # DeepSeek
    "deepseek-chat": Price(0.28, 0.42, 0.028, 0.28),
    "deepseek-reasoner": Price(0.28, 0.42, 0.028, 0.28),
}


class PriceTable:
    """The defaults with the user's entries on top; a lookup by longest name prefix."""

    def __init__(self, overrides: Mapping[str, Price] | None = None, *, defaults: Mapping[str, Price] = DEFAULT_PRICES):
        self.prices = {**{k.lower(): v for k, v in defaults.items()}, **{k.lower(): v for k, v in (overrides or {}).items()}}
        self._prefixes = sorted(self.prices, key=len, reverse=True)

    def price_of(self, model: str) -> Price | None:
        name = model.lower()
        short = name.rsplit("/", 1)[-1]  # "openai/gpt-4.1" -> "gpt-4.1"
        for candidate in (name, short):
            for prefix in self._prefixes:
                if candidate.startswith(prefix):
                    return self.prices[prefix]
        return None

    def cost_usd(self, model: str, usage: Usage) -> float | None:
        """The estimated cost of `usage` with `model`; None when its price is not known."""
        price = self.price_of(model)
        if price is None:
            return None
        read = int(usage.get("cacheReadTokens") or 0)
        write = int(usage.get("cacheWriteTokens") or 0)
        # inputTokens counts every prompt token, cached ones included (types.py)
        fresh = max(0, int(usage.get("inputTokens") or 0) - read - write)
        # reasoning tokens are output tokens already (both providers count them in the output)
        output = int(usage.get("outputTokens") or 0)
        cache_read = price.input if price.cache_read is None else price.cache_read
        cache_write = price.input if price.cache_write is None else price.cache_write
        dollars = fresh * price.input + read * cache_read + write * cache_write + output * price.output
        return dollars / 1_000_000


def price_table(settings: Mapping[str, object]) -> PriceTable:
    """The price table of the `model.prices` setting (PriceSettings by name prefix) over the defaults."""
    return PriceTable({name: Price(p.input, p.output, p.cache_read, p.cache_write) for name, p in settings.items()})  # type: ignore[attr-defined]
