"""What a model call costs: the price model the eval bills tokens with.

`attention_scoping.core.cost` (when present) is the package's price model; until then, and for
a quick command-line figure, `TokenPrices` bills plain per-million-token prices. Anything with a
`cost(input_tokens, output_tokens, cached_tokens) -> float` method works.
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
