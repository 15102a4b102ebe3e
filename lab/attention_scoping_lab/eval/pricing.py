"""What a model call costs in USD: the prices the eval bills the reported usage with.

`TokenPrices` bills plain per-million-token prices (`--price-in/--price-out/--price-cached`).
Anything with a `cost(input_tokens, output_tokens, cached_tokens) -> float` method works (a
`CallPricer`). The one price model of the lab is `attention_scoping_lab.cost.PriceModel` (a
provider's cache rules, which `simulate --sessions` uses to predict cached tokens); here the
endpoint reports cached tokens, so only the USD prices are needed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class CallPricer(Protocol):
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


def __getattr__(name: str) -> object:
    """`PriceModel`, this protocol's name before 0.2 (deprecated: it is `CallPricer` now)."""
    if name == "PriceModel":
        warnings.warn(
            "attention_scoping_lab.eval.pricing.PriceModel is deprecated and will be removed in "
            "1.0; use CallPricer (the price model is attention_scoping_lab.cost.PriceModel)",
            DeprecationWarning,
            stacklevel=2,
        )
        return CallPricer
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
