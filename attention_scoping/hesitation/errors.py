"""The small-model kit's configuration errors (hesitation, text tool calls, turn digest).

Both derive from `attention_scoping.errors.AttentionScopingError`, so one `except` catches every
error the package raises, and from the built-in they replace (`ValueError`, `TypeError`).
"""

from __future__ import annotations

from attention_scoping.errors import AttentionScopingError


class KitConfigError(AttentionScopingError, ValueError):
    """A bad option value of the kit (a count below its minimum, an unknown choice, options
    that contradict each other)."""


class KitTypeError(AttentionScopingError, TypeError):
    """An option of the wrong type (a string where a list of names or patterns is expected)."""


def check_at_least(name: str, value: float, least: float = 0) -> None:
    """Raise `KitConfigError` unless `value >= least`: "`name` must be >= 0, not -1"."""
    if value < least:
        msg = f"{name} must be >= {least}, not {value!r}"
        raise KitConfigError(msg)
