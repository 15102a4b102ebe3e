"""Retries with exponential backoff for transient endpoint errors (429, 5xx, timeouts)."""

from __future__ import annotations

import asyncio
import importlib
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

MAX_RETRY_AFTER = 60.0
"""Longest server-requested wait (`Retry-After`) honoured, in seconds."""


class EndpointRejected(Exception):
    """The endpoint refused us for good (bad key, no access): stop the whole run."""


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


PERMANENT_5XX = frozenset({501, 505})
"""Server errors that say the server cannot do this at all (not implemented, HTTP version): a
static file server answers POST with 501, and no retry changes that."""


def _dropped(exc: BaseException) -> bool:
    """A timeout or a dropped connection of the OpenAI client, or of the Anthropic one (the
    eval's `--bridge anthropic` model)."""
    for module in ("openai", "anthropic"):
        try:
            client = importlib.import_module(module)
        except ImportError:
            continue
        if isinstance(exc, client.APITimeoutError | client.APIConnectionError):
            return True
    return False


def is_transient(exc: BaseException) -> bool:
    """429, a 5xx other than `PERMANENT_5XX`, a timeout or a dropped connection: worth another
    try."""
    if _dropped(exc):
        return True
    status = _status(exc)
    if status is None or status in PERMANENT_5XX:
        return False
    return status == 429 or status >= 500


def is_fatal(exc: BaseException) -> bool:
    """401 and 403: every later call would fail the same way."""
    return _status(exc) in (401, 403)


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    raw = headers.get("retry-after") if headers is not None else None
    try:
        return min(float(raw), MAX_RETRY_AFTER) if raw is not None else None
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry transient errors.

    Attributes:
        retries: Extra attempts after the first one.
        base: Seconds before the first retry; doubles each time (with up to 25 % jitter).
        cap: Longest wait between two attempts.
    """

    retries: int = 4
    base: float = 1.0
    cap: float = 30.0

    def delay(self, attempt: int, exc: BaseException) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        hinted = _retry_after(exc)
        if hinted is not None:
            return hinted
        wait = min(self.base * (2**attempt), self.cap)
        return wait * (1 + random.random() / 4)

    def call(
        self, fn: Callable[[], T], sleep: Callable[[float], None] = time.sleep
    ) -> tuple[T, int]:
        """`fn()` with retries; returns (result, retries used). Fatal errors raise at once."""
        attempt = 0
        while True:
            try:
                return fn(), attempt
            except Exception as exc:
                sleep(self._wait(attempt, exc))
                attempt += 1

    async def acall(
        self,
        fn: Callable[[], Awaitable[T]],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> tuple[T, int]:
        """Async form of `call`: `await fn()` with retries; returns (result, retries used)."""
        attempt = 0
        while True:
            try:
                return await fn(), attempt
            except Exception as exc:
                await sleep(self._wait(attempt, exc))
                attempt += 1

    def _wait(self, attempt: int, exc: Exception) -> float:
        """Seconds before retry `attempt` of a call that raised `exc`; raises when there is none
        (`EndpointRejected` for a refused key, `exc` itself when not transient or out of tries)."""
        if is_fatal(exc):
            raise EndpointRejected(str(exc)) from exc
        if attempt >= self.retries or not is_transient(exc):
            raise exc
        return self.delay(attempt, exc)
