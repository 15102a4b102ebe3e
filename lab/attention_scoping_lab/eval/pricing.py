"""What a model call costs in USD: the price model the eval bills the reported usage with.

`TokenPrices` bills plain per-million-token prices (`--price-in/--price-out/--price-cached`).
Anything with a `cost(input_tokens, output_tokens, cached_tokens) -> float` method works. Not to
be confused with `attention_scoping_lab.cost.PriceModel`: that one is a provider's cache rules
and multipliers of its input price, which `simulate --sessions` uses to predict cached tokens;
here the endpoint reports them, so only the USD prices are needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class PriceModel(Protocol):
    """Billed USD for one model call's usage (`cached_tokens` is part of `input_tokens`)."""

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int) -> float:
        """USD billed for one call."""
        ...


@dataclass(frozen=True)
class TokenPrices:
    """USD per million tokens: fresh input, output, and input read from the prompt cache.

    `cached` defaults to the input price (no cache discount) when not given.
    """

    input: float = 0.0
    output: float = 0.0
    cached: float | None = None

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int) -> float:
        """USD billed for one call."""
        cached = min(cached_tokens, input_tokens)
        cached_price = self.input if self.cached is None else self.cached
        return (
            (input_tokens - cached) * self.input
            + cached * cached_price
            + output_tokens * self.output
        ) / 1_000_000

    @property
    def free(self) -> bool:
        """Whether every price is zero (a local model)."""
        return not (self.input or self.output or self.cached)
