"""One SQLite file shared safely by threads and processes: WAL, busy timeout, immediate writes.

Used by the SQLite ledger and by the safety stores (used tokens, confirmation codes, intents),
so every durable SQLite table of the package is opened and written the same way. After a
transient error (disk I/O, disk full, a lock held past the busy timeout) `reset()` drops the
connection and the next transaction opens a fresh one.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any, ClassVar, Literal

from attention_scoping.common.options import check_choice
from attention_scoping.storage.database import close_quietly
from attention_scoping.storage.retry import RetryPolicy

__all__ = ["SqliteDatabase", "SqliteStore", "SqliteTx", "Synchronous"]

logger = logging.getLogger(__name__)

Synchronous = Literal["FULL", "NORMAL"]
"""`FULL` fsyncs every commit (survives power loss); `NORMAL` only survives process crashes."""


class SqliteTx:
    """A transaction's connection as the shared SQL uses it (`rows`, `run`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        """Wrap a connection inside a transaction."""
        self.conn = conn

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a statement and return its rows."""
        return list(self.conn.execute(sql, params).fetchall())

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement and return the number of rows it changed."""
        return int(self.conn.execute(sql, params).rowcount)


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
        """Keep the settings for the file at `path`; the first transaction (normally a
        retried `setup`) opens it, creating it if needed, in WAL mode."""
        check_choice("synchronous", synchronous, Synchronous)
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self.synchronous = synchronous
        self._lock = threading.RLock()
        self._closed = False
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        """A new connection with the pragmas every user of the file relies on."""
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _live(self) -> sqlite3.Connection:
        """The connection, reopened when a reset dropped it."""
        if self._conn is None:
            if self._closed:
                msg = f"the database {self.path} was closed"
                raise sqlite3.ProgrammingError(msg)
            self._conn = self._connect()
        return self._conn

    def reset(self) -> None:
        """Drop the connection (after a transient error); the next use opens a new one."""
        with self._lock:
            conn, self._conn = self._conn, None
            close_quietly(conn, sqlite3.Error, self.path)

    def _end(self, conn: sqlite3.Connection, statement: str) -> None:
        """End a failed transaction; a connection that cannot even roll back is dropped."""
        try:
            if conn.in_transaction:  # also when COMMIT itself failed
                conn.execute(statement)
        except sqlite3.Error as exc:
            logger.warning("%s on %s failed (%s); reopening", statement, self.path, exc)
            self.reset()

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        """`begin` ... `COMMIT` on the shared connection, rolled back on any error."""
        with self._lock:
            conn = self._live()
            conn.execute(begin)
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                self._end(conn, "ROLLBACK")
                raise

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction (`BEGIN IMMEDIATE` ... `COMMIT`, rolled back on any error)."""
        return self._transaction("BEGIN IMMEDIATE")

    def read(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read transaction: one consistent snapshot, without taking the write lock."""
        return self._transaction("BEGIN")

    @contextmanager
    def write_tx(self) -> Iterator[SqliteTx]:
        """`write()` seen through `SqliteTx`."""
        with self.write() as conn:
            yield SqliteTx(conn)

    @contextmanager
    def read_tx(self) -> Iterator[SqliteTx]:
        """`read()` seen through `SqliteTx`."""
        with self.read() as conn:
            yield SqliteTx(conn)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one read-only statement (a consistent snapshot of committed data)."""
        with self._lock:
            return self._live().execute(sql, params).fetchall()

    def setup(
        self,
        statements: Iterable[str],
        *,
        retry: RetryPolicy | None,
        what: str,
        migrate: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """Run schema statements (all `IF NOT EXISTS`), then `migrate`, in one write
        transaction; a lock another process holds past the busy timeout (or another transient
        error) is waited out under `retry`, on a fresh connection, and reported as `what`
        (`retry=None`: one attempt, its error raised as is)."""
        schema = list(statements)
        self._create_atomically(schema, migrate)

        def attempt(_again: bool) -> None:
            with self.write() as conn:
                for statement in schema:
                    conn.execute(statement)
                if migrate is not None:
                    migrate(conn)

        if retry is None:
            attempt(False)
        else:
            retry.run(attempt, what=what, reset=self.reset)

    def _create_atomically(
        self, schema: Sequence[str], migrate: Callable[[sqlite3.Connection], None] | None
    ) -> None:
        """A missing file is built under a temporary name beside it and hard-linked into place,
        so no process ever opens it half made (SQLite creates a 0-byte file first, which the
        ledger refuses as not a ledger). When another process linked its file first, that one
        is used; where hard links are not supported, the file is created in place."""
        if self.path in ("", ":memory:") or self.path.startswith("file:"):
            return
        if os.path.lexists(self.path):
            return
        temp = f"{self.path}.{uuid.uuid4().hex[:12]}.new"
        try:
            conn = sqlite3.connect(temp, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("BEGIN IMMEDIATE")
                for statement in schema:
                    conn.execute(statement)
                if migrate is not None:
                    migrate(conn)
                conn.execute("COMMIT")
            finally:
                conn.close()  # the last connection: the WAL is checkpointed and removed
            with suppress(FileExistsError):  # another process won the race: use its file
                os.link(temp, self.path)
        except (OSError, sqlite3.Error) as exc:  # e.g. no hard links here: created in place
            logger.debug("atomic creation of %s failed (%s); creating in place", self.path, exc)
        finally:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with suppress(FileNotFoundError):
                    os.unlink(temp + suffix)

    def close(self) -> None:
        """Close the connection (for good: it is not reopened)."""
        with self._lock:
            self._closed = True
            self.reset()


class SqliteStore:
    """Base of a store kept in tables of one SQLite file, which other stores may share (distinct
    tables): `__init__` opens the file and creates the subclass's `SCHEMA`."""

    SCHEMA: ClassVar[Sequence[str]] = ()
    """The store's `CREATE ... IF NOT EXISTS` statements."""
    LABEL: ClassVar[str] = "store"
    """The store's name in an error report (`"<LABEL> open"`)."""
    db: SqliteDatabase

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        retry: RetryPolicy | None = None,
    ) -> None:
        """Open or create the store's tables in the file at `path`; `retry` (default
        `RetryPolicy()`) is how the store's operations wait out transient errors."""
        self.retry = retry if retry is not None else RetryPolicy()
        self.db = SqliteDatabase(path, synchronous=synchronous)
        self.db.setup(self.SCHEMA, retry=None, what=f"{self.LABEL} open", migrate=self._migrate)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring tables an older release wrote up to date (default: nothing to do)."""
