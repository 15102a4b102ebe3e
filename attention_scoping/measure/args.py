"""Argument types and input errors shared by the `attention-scoping` subcommands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

N = TypeVar("N", int, float)


class UsageError(Exception):
    """A problem with the user's input that deserves one line, not a traceback."""


def int_list(text: str) -> list[int]:
    """Comma-separated integers >= 1 (an argparse type)."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        msg = f"expected comma-separated integers, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not values or min(values) < 1:
        msg = f"expected integers >= 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return values


def float_list(text: str) -> list[float]:
    """Comma-separated numbers (an argparse type)."""
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        msg = f"expected comma-separated numbers, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def name_list(text: str) -> list[str]:
    """Comma-separated names, blanks dropped (an argparse type)."""
    return [v.strip() for v in text.split(",") if v.strip()]


def _at_least(text: str, convert: Callable[[str], N], least: N, kind: str) -> N:
    """`text` as a `kind` of value >= `least`, or an argparse error naming what was given."""
    try:
        value = convert(text)
    except ValueError:
        msg = f"expected {kind}, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not value >= least:  # NaN fails too
        msg = f"expected {kind} >= {least:g}, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive(text: str) -> int:
    """An integer >= 1 (an argparse type)."""
    return _at_least(text, int, 1, "an integer")


def non_negative(text: str) -> float:
    """A number >= 0 (an argparse type)."""
    return _at_least(text, float, 0.0, "a number")


def check_output(path: str | None, suffix: str | None = None) -> None:
    """Refuse an output path that is a directory or lacks the expected suffix."""
    if path is None:
        return
    target = Path(path)
    if suffix is not None and target.suffix.lower() != suffix:
        msg = f"{path}: expected a {suffix} file name"
        raise UsageError(msg)
    if target.exists() and target.is_dir():
        msg = f"{path}: is a directory, expected a file name"
        raise UsageError(msg)
