"""Validation of keyword options that take one of a few values (a `Literal` type) or a count:
the checks every constructor uses, so every message reads "`name` must be 'a' or 'b', not 'c'"
("`name` must be >= 0, not -1")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args


def choices_text(choices: Iterable[object]) -> str:
    """`'a' or 'b'`, `one of 'a', 'b' or 'c'`: the valid values, for an error message."""
    quoted = [f"'{c}'" if isinstance(c, str) else repr(c) for c in choices]
    if len(quoted) == 1:
        return quoted[0]
    listed = f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return listed if len(quoted) == 2 else f"one of {listed}"


def check_choice(
    name: str, value: object, choices: Any, error: type[ValueError] = ValueError
) -> None:
    """Raise `error` unless `value` is one of `choices` (a `Literal` alias or values):
    "`name` must be 'a' or 'b', not 'c'"."""
    allowed = get_args(choices) or tuple(choices)
    if value not in allowed:
        msg = f"{name} must be {choices_text(allowed)}, not {value!r}"
        raise error(msg)


def check_at_least(name: str, value: float, least: float = 0) -> None:
    """Raise `ValueError` unless `value >= least`: "`name` must be >= 0, not -1"."""
    if value < least:
        msg = f"{name} must be >= {least}, not {value!r}"
        raise ValueError(msg)
