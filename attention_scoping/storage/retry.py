"""Transient database errors, told apart from real ones, and retried with capped backoff.

A database restart, a failover, a full disk or a writer holding SQLite's lock too long are
passing conditions: the operation is retried on a fresh connection after a capped, jittered,
exponentially growing pause. Anything else (a constraint, a syntax error, bad credentials) is
raised at once. When the retry budget runs out, `DatabaseUnavailableError` says so, with the
last error as its cause; `Worker.run` keeps looping through it.

Example:
    ```python
    policy = RetryPolicy(base=0.05, cap=5.0, deadline=60.0)
    rows = policy.run(lambda again: fetch_rows(), what="fetch rows", reset=reconnect)
    ```
"""

from __future__ import annotations

import logging
import random
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from attention_scoping.errors import AttentionScopingError, ScopeConfigError

__all__ = ["Backoff", "DatabaseUnavailableError", "RetryPolicy", "is_transient"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# SQLite primary result codes that pass: BUSY, LOCKED, IOERR, FULL, PROTOCOL. (CANTOPEN is
# left out: it is far more often a wrong path than a passing condition.)
_SQLITE_TRANSIENT_CODES = frozenset({5, 6, 10, 13, 15})
_SQLITE_TRANSIENT_TEXT = (
    "database is locked",
    "database table is locked",
    "database is busy",
    "disk i/o error",
    "database or disk is full",
    "locking protocol",
)
# PostgreSQL SQLSTATE classes that never pass by waiting: authorization (28), and a database or
# schema that does not exist (3D, 3F).
_PG_PERMANENT_CLASSES = frozenset({"28", "3D", "3F"})


class DatabaseUnavailableError(AttentionScopingError, RuntimeError):
    """The database stayed unreachable (or locked, or full) for the whole retry budget."""


def _psycopg_transient(exc: BaseException) -> bool | None:
    """True/False for psycopg errors, None for anything else (psycopg is optional)."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(exc, psycopg.Error):
        return None
    if not isinstance(exc, psycopg.OperationalError):  # InterfaceError, ProgrammingError...
        return False
    state = getattr(exc, "sqlstate", None)
    return not (isinstance(state, str) and state[:2] in _PG_PERMANENT_CLASSES)


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` is a database condition that retrying later can clear.

    Transient: psycopg's `OperationalError` family (connection lost or refused,
    `AdminShutdown`, `CannotConnectNow`, serialization failures and deadlocks, too many
    connections, a full disk) except authorization and missing-database errors; SQLite's
    busy/locked, disk I/O and disk full; and `DatabaseUnavailableError` itself.
    """
    if isinstance(exc, DatabaseUnavailableError):
        return True
    found = _psycopg_transient(exc)
    if found is not None:
        return found
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int):
            return code & 0xFF in _SQLITE_TRANSIENT_CODES
        text = str(exc).lower()
        return any(marker in text for marker in _SQLITE_TRANSIENT_TEXT)
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """Capped exponential backoff with jitter, bounded by a total time budget.

    The n-th pause (n = 0, 1, ...) is drawn from `[d/2, d]` with `d = min(cap, base * 2**n)`:
    growing, never above `cap`, and spread so that workers hit by the same restart do not
    all come back at the same instant.

    Args:
        base: First pause ceiling, in seconds.
        cap: Largest pause, in seconds.
        deadline: Seconds of retrying (from the first failure) before giving up.
        max_attempts: Attempts before giving up (None: only `deadline` bounds them).
        sleep: How to wait (inject a fake in tests).
        clock: Monotonic seconds, for the deadline.
        rand: Uniform draws in [0, 1), for the jitter.
    """

    base: float = 0.05
    cap: float = 5.0
    deadline: float = 60.0
    max_attempts: int | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    rand: Callable[[], float] = field(default=random.random, repr=False)

    def __post_init__(self) -> None:
        """Refuse settings that would never wait or never stop."""
        if self.base <= 0 or self.cap < self.base or self.deadline < 0:
            msg = (
                "RetryPolicy needs 0 < base <= cap and deadline >= 0, got "
                f"base={self.base}, cap={self.cap}, deadline={self.deadline}"
            )
            raise ScopeConfigError(msg)
        if self.max_attempts is not None and self.max_attempts < 1:
            msg = f"max_attempts must be at least 1 (or None), not {self.max_attempts}"
            raise ScopeConfigError(msg)

    def delay(self, retry: int) -> float:
        """The pause before retry number `retry` (0-based), jitter included."""
        ceiling = min(self.cap, self.base * 2 ** min(retry, 62))
        return ceiling / 2 + self.rand() * ceiling / 2

    def run(
        self,
        op: Callable[[bool], T],
        *,
        what: str,
        reset: Callable[[], None] | None = None,
    ) -> T:
        """`op(again)` until it returns; transient errors are retried after `reset()`.

        `again` is False on the first attempt and True on retries, so an operation whose
        earlier attempt may have committed before the connection dropped can look first.

        Raises:
            DatabaseUnavailableError: transient errors for the whole budget.
            Exception: any non-transient error, unchanged, at once.
        """
        started: float | None = None
        retry = 0
        while True:
            try:
                return op(retry > 0)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                now = self.clock()
                started = now if started is None else started
                out_of_attempts = self.max_attempts is not None and retry + 1 >= self.max_attempts
                if out_of_attempts or now - started >= self.deadline:
                    msg = (
                        f"{what}: the database is unavailable after {retry + 1} attempt(s) "
                        f"over {now - started:.1f} s: {type(exc).__name__}: {exc}"
                    )
                    raise DatabaseUnavailableError(msg) from exc
                pause = self.delay(retry)
                logger.warning(
                    "%s: transient database error (%s: %s); retry %d in %.2f s",
                    what,
                    type(exc).__name__,
                    str(exc).strip().splitlines()[0] if str(exc).strip() else "",
                    retry + 1,
                    pause,
                )
                if reset is not None:
                    _quietly(reset, what)
                self.sleep(pause)
                retry += 1


def _quietly(reset: Callable[[], None], what: str) -> None:
    """Run a connection reset; its own failure is left for the next attempt to meet."""
    try:
        reset()
    except Exception as exc:  # the next attempt reconnects or reports the real error
        logger.debug("%s: reset failed: %s", what, exc)


class Backoff:
    """The pause sequence of a `RetryPolicy` for a loop that never gives up (a worker loop).

    `next()` grows the pause up to `cap`; `reset()` after a success starts again from `base`.
    """

    def __init__(self, policy: RetryPolicy) -> None:
        """Start at the first pause of `policy`."""
        self.policy = policy
        self.failures = 0

    def next(self) -> float:
        """The pause after one more failure."""
        pause = self.policy.delay(self.failures)
        self.failures += 1
        return pause

    def reset(self) -> None:
        """Forget past failures."""
        self.failures = 0
