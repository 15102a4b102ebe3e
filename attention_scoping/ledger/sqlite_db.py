"""One SQLite file shared safely by threads and processes: WAL, busy timeout, immediate writes.

Used by the SQLite ledger and by the safety stores (used tokens, confirmation codes, intents),
so every durable SQLite table of the package is opened and written the same way.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

__all__ = ["SqliteDatabase", "Synchronous"]

Synchronous = Literal["FULL", "NORMAL"]
"""`FULL` fsyncs every commit (survives power loss); `NORMAL` only survives process crashes."""


class SqliteDatabase:
    """A connection to one SQLite file, safe to share between the threads of a process.

    Every write runs in `BEGIN IMMEDIATE`, which takes the file's write lock up front: two
    processes can never both read a row as free and then both take it. Waits for the lock are
    bounded by `busy_timeout` seconds. Open one `SqliteDatabase` per process (never pass one
    across `fork`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 30.0,
        synchronous: Synchronous = "FULL",
    ) -> None:
        """Open (creating if needed) the file at `path` in WAL mode."""
        if synchronous not in ("FULL", "NORMAL"):
            msg = f"synchronous must be 'FULL' or 'NORMAL', not {synchronous!r}"
            raise ValueError(msg)
        self.path = os.fspath(path)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(f"PRAGMA synchronous = {synchronous}")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (`BEGIN IMMEDIATE` ... `COMMIT`, rolled back on any error)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # also when COMMIT itself failed
                    self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot, without taking the write lock."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one read-only statement (a consistent snapshot of committed data)."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def setup(self, statements: Iterable[str]) -> None:
        """Run schema statements (all `IF NOT EXISTS`) in one write transaction."""
        with self.write() as conn:
            for statement in statements:
                conn.execute(statement)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
