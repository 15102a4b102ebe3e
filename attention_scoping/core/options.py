"""Validation of keyword options that take one of a few string values (a `Literal` type)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args


def quoted_choices(choices: Iterable[object]) -> str:
    """`'a' or 'b'`, `'a', 'b' or 'c'`: the valid values, for an error message."""
    quoted = [f"'{c}'" for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def check_choice(name: str, value: object, choices: Any) -> None:
    """Raise `ValueError` unless `value` is one of `choices` (a `Literal` alias or values):
    "`name` must be 'a' or 'b', not 'c'"."""
    allowed = get_args(choices) or tuple(choices)
    if value not in allowed:
        msg = f"{name} must be {quoted_choices(allowed)}, not {value!r}"
        raise ValueError(msg)
