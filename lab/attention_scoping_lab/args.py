"""Argument types and input errors shared by the `attention-scoping` subcommands.

One pricing vocabulary across the command: `--price MODEL` always names a price model
(`attention_scoping_lab.cost.PriceModel`: a provider's prompt-cache rules, as multiples of its
input price; `simulate --sessions`, `bill`), and US dollars are always per million tokens,
`--price-in`, `--price-out`, `--price-cached` (`audit`, `eval`).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


class UsageError(Exception):
    """A problem with the user's input that deserves one line, not a traceback."""


def _parsed(text: str, convert: Callable[[str], T], expected: str) -> T:
    """`convert(text)`, or the argparse error "expected <expected>, got <text>"."""
    try:
        return convert(text)
    except ValueError:
        msg = f"expected {expected}, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def _numbers(text: str, convert: Callable[[str], T]) -> list[T]:
    return [convert(v) for v in text.split(",") if v.strip()]


def int_list(text: str) -> list[int]:
    """Comma-separated integers >= 1 (an argparse type)."""
    values = _parsed(text, lambda t: _numbers(t, int), "comma-separated integers")
    if not values or min(values) < 1:
        msg = f"expected integers >= 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return values


def float_list(text: str) -> list[float]:
    """Comma-separated numbers (an argparse type)."""
    return _parsed(text, lambda t: _numbers(t, float), "comma-separated numbers")


def name_list(text: str) -> list[str]:
    """Comma-separated names, blanks dropped (an argparse type)."""
    return [v.strip() for v in text.split(",") if v.strip()]


def positive(text: str) -> int:
    """An integer >= 1 (an argparse type)."""
    value = _parsed(text, int, "an integer")
    if value < 1:
        msg = f"expected an integer >= 1, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def non_negative(text: str) -> float:
    """A number >= 0, NaN refused (an argparse type)."""
    value = _parsed(text, float, "a number")
    if not value >= 0:
        msg = f"expected a number >= 0, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (an argparse type): -1, 0, nan and inf are refused."""
    value = _parsed(text, float, "a positive number of seconds")
    if not (math.isfinite(value) and value > 0):
        msg = f"expected a positive number of seconds, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def check_output(path: str | None, suffix: str | None = None) -> None:
    """Refuse an output path that is a directory, lacks the expected suffix, or lies in a
    folder that does not exist or cannot be written: the commands write only where they are
    asked to and never create a folder the user did not name."""
    if path is None:
        return
    target = Path(path)
    if suffix is not None and target.suffix.lower() != suffix:
        msg = f"{path}: expected a {suffix} file name"
        raise UsageError(msg)
    if target.is_dir():
        msg = f"{path}: is a directory, expected a file name"
        raise UsageError(msg)
    folder = target.parent
    if not folder.exists() and not folder.is_symlink():
        trail = next((p for p in folder.parents if p.exists()), None)
        if trail is not None and not trail.is_dir():
            msg = f"{path}: {trail} is not a folder"
        else:
            msg = f"{path}: the folder {folder} does not exist (create it first)"
        raise UsageError(msg)
    if not folder.is_dir():
        msg = f"{path}: {folder} is not a folder"
        raise UsageError(msg)
    if not os.access(folder, os.W_OK | os.X_OK) or (
        target.exists() and not os.access(target, os.W_OK)
    ):
        msg = f"{path}: cannot write there (permission denied)"
        raise UsageError(msg)


def add_usd_prices(
    group: argparse._ArgumentGroup | argparse.ArgumentParser,
    *,
    output: bool,
    default: float | None,
) -> None:
    """`--price-in` (and, with `output`, `--price-out` and `--price-cached`): US dollars per
    million tokens, the one spelling of money in the command."""
    group.add_argument(
        "--price-in",
        type=non_negative,
        default=default,
        metavar="USD",
        help="USD per million input tokens" + ("" if output else ", to show costs"),
    )
    if output:
        group.add_argument(
            "--price-out",
            type=non_negative,
            default=default,
            metavar="USD",
            help="USD per million output tokens",
        )
        group.add_argument(
            "--price-cached",
            type=non_negative,
            default=None,
            metavar="USD",
            help="USD per million cached input tokens (default: --price-in)",
        )


def _deprecated_usd(text: str) -> float:
    """The value of the deprecated `audit --price USD` (an argparse type)."""
    try:
        return non_negative(text)
    except argparse.ArgumentTypeError:
        msg = (
            f"expected USD, got {text!r}; --price USD is deprecated for audit: use --price-in "
            "USD (--price names a price model in simulate and bill)"
        )
        raise argparse.ArgumentTypeError(msg) from None


def add_deprecated_usd_price(group: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    """`audit --price USD`, the spelling before `--price-in` (hidden; warns when used)."""
    group.add_argument(
        "--price", dest="deprecated_price", type=_deprecated_usd, help=argparse.SUPPRESS
    )


def price_in_from_args(args: argparse.Namespace) -> float | None:
    """`--price-in`, or the deprecated `--price USD` with a warning (`--price-in` wins)."""
    old = getattr(args, "deprecated_price", None)
    if old is None:
        return args.price_in
    logger.warning(
        "--price USD is deprecated for audit and will be removed in 1.0: use --price-in USD "
        "(--price names a price model in simulate and bill)"
    )
    return args.price_in if args.price_in is not None else old


def add_price_options(group: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    """`--price MODEL` and its overrides (`--cache-read`, `--cache-write`, `--ttl`,
    `--min-cacheable`), shared by `simulate --sessions` and `bill`."""
    group.add_argument(
        "--price",
        default=None,
        metavar="MODEL",
        help="price model (a provider's prompt-cache rules): anthropic (default), "
        "anthropic-1h, openai, none",
    )
    group.add_argument("--cache-read", type=float, default=None, metavar="X", help="read price")
    group.add_argument("--cache-write", type=float, default=None, metavar="X", help="write price")
    group.add_argument("--ttl", type=float, default=None, metavar="S", help="cache lifetime (s)")
    group.add_argument(
        "--min-cacheable", type=int, default=None, metavar="N", help="shortest cached prefix"
    )


def prices_from_args(args: argparse.Namespace) -> list[Any]:
    """The price model of `--price` with its overrides first, then the other named ones.

    Raises:
        UsageError: an unknown price model or a bad override (the valid values named).
    """
    from attention_scoping_lab.cost import PRICE_MODELS, PriceModelError, price_model

    try:
        price = price_model(
            args.price or "anthropic",
            cache_read=args.cache_read,
            cache_write=args.cache_write,
            ttl_s=args.ttl,
            min_cacheable=args.min_cacheable,
        )
    except PriceModelError as exc:
        raise UsageError(str(exc)) from None
    return [price, *(p for n, p in PRICE_MODELS.items() if n != price.name)]
