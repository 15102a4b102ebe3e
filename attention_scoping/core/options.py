"""Validation of keyword options that take one of a few values (a `Literal` type): the one check
every constructor uses, so every message reads "`name` must be 'a' or 'b', not 'c'"."""

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
