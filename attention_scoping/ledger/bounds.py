"""Bounds on the ledger's durations: every lease, delay and pause is a finite number of seconds
within a documented maximum, so no task is leased forever or never claimable.

`nan` compares false with everything (a `nan` lease never expires, a `nan` delay never comes
due), `inf` is the same on purpose, and `1e12` seconds (31,700 years) is one by mistake; none is
reported anywhere once written, so they are refused when asked for.
"""

from __future__ import annotations

import math
from typing import Any

from attention_scoping.errors import ScopeConfigError

__all__ = ["MAX_DELAY_SECONDS", "MAX_LEASE_SECONDS", "check_delay", "check_lease"]

MAX_LEASE_SECONDS = 7 * 24 * 3600.0
"""Longest lease (and heartbeat interval): one week. A worker that needs longer renews it
(`heartbeat`); a dead worker's task returns to the pool within this much time."""

MAX_DELAY_SECONDS = 366 * 24 * 3600.0
"""Longest wait before a task may be claimed (`create(delay=)`, `fail(retry_after=)`): one
year."""


def _seconds(value: Any, name: str, *, positive: bool, maximum: float, label: str) -> float:
    valid = (
        f"a finite number of seconds {'> 0' if positive else '>= 0'} and at most "
        f"{maximum:,.0f} ({label})"
    )
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{name} must be {valid}, not {type(value).__name__} {value!r}"
        raise TypeError(msg)
    low_ok = value > 0 if positive else value >= 0
    if not (math.isfinite(value) and low_ok and value <= maximum):
        msg = f"{name} must be {valid}, not {value!r}"
        raise ScopeConfigError(msg)
    return float(value)


def check_lease(value: Any, name: str = "lease_seconds") -> float:
    """`value` as a lease length; `ValueError` (`TypeError` for a non-number) naming `name`
    and the valid range unless finite, > 0 and at most `MAX_LEASE_SECONDS`."""
    return _seconds(value, name, positive=True, maximum=MAX_LEASE_SECONDS, label="one week")


def check_delay(value: Any, name: str = "delay") -> float:
    """`value` as a delay; `ValueError` (`TypeError` for a non-number) naming `name` and the
    valid range unless finite, >= 0 and at most `MAX_DELAY_SECONDS`."""
    return _seconds(value, name, positive=False, maximum=MAX_DELAY_SECONDS, label="366 days")
