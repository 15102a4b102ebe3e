"""Argument types and input errors shared by the `attention-scoping` subcommands."""

from __future__ import annotations

import argparse
from pathlib import Path


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


def positive(text: str) -> int:
    """An integer >= 1 (an argparse type)."""
    try:
        value = int(text)
    except ValueError:
        msg = f"expected an integer, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 1:
        msg = f"expected an integer >= 1, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def non_negative(text: str) -> float:
    """A number >= 0, NaN refused (an argparse type)."""
    try:
        value = float(text)
    except ValueError:
        msg = f"expected a number, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not value >= 0:
        msg = f"expected a number >= 0, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


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
