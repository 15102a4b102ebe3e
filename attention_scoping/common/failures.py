"""Exceptions as text that never raises: a failure report must not fail in turn.

An exception's `__str__` is code the package does not control (a tool's, a store's, a hook's);
when it raises, the structured result that reports the failure must still be made. The gateway,
the two-phase write journal and the gate's preconditions read exceptions through these.
"""

from __future__ import annotations

__all__ = ["UNREADABLE", "exception_line", "exception_text"]

UNREADABLE = "(its message could not be read)"
"""What stands for the message of an exception whose `str()` raises."""


def exception_text(exc: BaseException) -> str:
    """`str(exc)`, or `UNREADABLE` when the exception's own `__str__` fails."""
    try:
        return str(exc)
    except Exception:
        return UNREADABLE


def exception_line(exc: BaseException) -> str:
    """`Type: message` of `exc` (the message as `exception_text` reads it)."""
    return f"{type(exc).__name__}: {exception_text(exc)}"
