"""What a SQL store needs of its database: transactions that run `?`-placeholder SQL, and a
connection it can drop after a transient error. `SqliteDatabase` and `PostgresDatabase` are the
two implementations; the task ledger and the token store are written against these protocols."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

__all__ = ["Database", "Tx", "close_quietly"]

logger = logging.getLogger(__name__)


class Tx(Protocol):
    """A transaction as the shared logic uses it (SQL written with `?` placeholders)."""

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a statement and return its rows."""
        ...

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement and return the number of rows it changed."""
        ...


class Database(Protocol):
    """One shared connection as the SQL stores use it (`SqliteDatabase`, `PostgresDatabase`)."""

    def write_tx(self) -> AbstractContextManager[Tx]:
        """A write transaction (committed on exit, rolled back on error)."""
        ...

    def read_tx(self) -> AbstractContextManager[Tx]:
        """A read-only snapshot."""
        ...

    def reset(self) -> None:
        """Drop the connection after a transient error (the next transaction reconnects)."""
        ...

    def close(self) -> None:
        """Close the connection for good."""
        ...


def close_quietly(
    conn: Any, errors: type[Exception] | tuple[type[Exception], ...], what: str
) -> None:
    """Close a dropped connection (None: nothing to close); a broken one may fail to close, and
    is gone either way: `errors` are logged (DEBUG, naming it `what`), not raised."""
    if conn is None:
        return
    try:
        conn.close()
    except errors as exc:
        logger.debug("closing %s failed: %s", what, exc)
