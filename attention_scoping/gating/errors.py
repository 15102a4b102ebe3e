"""The gate's configuration errors, under the package's one root (`AttentionScopingError`).

A bad option raises at construction, naming the option, the bad value and the valid range.
"""

from __future__ import annotations

import math

from attention_scoping.errors import AttentionScopingError


class GateConfigError(AttentionScopingError, ValueError):
    """A `ToolAttentionMiddleware` option, ranker, encoder or selector has a bad value."""


class PreconditionTypeError(GateConfigError, TypeError):
    """A precondition is neither a `callable(state) -> bool` nor a mapping of state values."""


def check_count(option: str, value: object, least: int = 0) -> None:
    """Refuse `value` unless it is an integer (not a bool) of at least `least`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        msg = f"{option} must be an integer >= {least}, not {value!r}"
        raise GateConfigError(msg)


def check_finite(
    option: str, value: object, low: float = -math.inf, high: float = math.inf
) -> None:
    """Refuse `value` unless it is a finite number within [low, high] (NaN and inf refused)."""
    valid = isinstance(value, int | float) and not isinstance(value, bool)
    if not valid or not math.isfinite(float(value)) or not low <= float(value) <= high:  # type: ignore[arg-type]
        where = (
            "a finite number" if (low, high) == (-math.inf, math.inf) else f"in [{low:g}, {high:g}]"
        )
        msg = f"{option} must be {where}, not {value!r}"
        raise GateConfigError(msg)
