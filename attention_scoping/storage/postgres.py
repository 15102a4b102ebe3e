"""One PostgreSQL connection shared safely by the threads of a process, reopened after a drop.

Used by the PostgreSQL ledger and the PostgreSQL token store, so every PostgreSQL table of the
package is reached the same way: autocommit connection, explicit transactions, a reconnect
after a restart or a failover, and schema creation that is safe when many processes open the
same database at once. Needs `psycopg` (`pip install -e ".[postgres]"` from a clone).
"""

from __future__ import annotations

import re
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from attention_scoping.common.extras import install_hint
from attention_scoping.errors import ScopeConfigError
from attention_scoping.storage.database import close_quietly

__all__ = ["PgTx", "PostgresDatabase", "check_identifier"]


_IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def check_identifier(name: str | None, what: str = "schema") -> None:
    """Refuse a schema (or table) name that is not a plain lower-case SQL identifier."""
    if name is not None and not _IDENT.match(name):
        msg = f"{what} must be a lower-case SQL identifier, not {name!r}"
        raise ScopeConfigError(msg)


class PgTx:
    """A transaction's cursor as the shared SQL uses it (`?` placeholders)."""

    def __init__(self, cur: Any) -> None:
        """Wrap a psycopg cursor."""
        self.cur = cur

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a statement and return its rows."""
        self.cur.execute(sql.replace("?", "%s"), tuple(params) or None)
        return list(self.cur.fetchall()) if self.cur.description is not None else []

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement and return the number of rows it changed."""
        self.cur.execute(sql.replace("?", "%s"), tuple(params) or None)
        return int(self.cur.rowcount)


class PostgresDatabase:
    """A psycopg connection, one transaction at a time, reopened when the server dropped it.

    Args:
        dsn: A libpq connection string or URL.
        connect_timeout: Seconds to wait for the server.
        name: What the connection serves, for messages ("ledger", "token store").
    """

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0, name: str = "database") -> None:
        """Connect (a wrong DSN or a server that is down fails here, at once)."""
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the install
            msg = f"the PostgreSQL {name} needs psycopg: {install_hint('postgres')}"
            raise ImportError(msg) from exc
        self.name = name
        self._lock = threading.RLock()
        self._connect: Callable[[], Any] = lambda: psycopg.connect(
            dsn, autocommit=True, connect_timeout=max(1, int(connect_timeout))
        )
        self._closed = False
        self.conn: Any = self._connect()

    def _live(self) -> Any:
        """The connection, reopened if the server dropped it (a restart, a failover)."""
        if self.conn is None or self.conn.broken or self.conn.closed:
            if self._closed:
                msg = f"the {self.name} was closed"
                raise RuntimeError(msg)
            self.conn = None
            self.conn = self._connect()
        return self.conn

    def reset(self) -> None:
        """Drop the connection after a transient error; the next transaction reconnects."""
        with self._lock:
            conn, self.conn = self.conn, None
            close_quietly(conn, Exception, f"the {self.name} connection")

    @contextmanager
    def write_tx(self) -> Iterator[PgTx]:
        """A write transaction (committed on exit, rolled back on error)."""
        with self._lock:
            conn = self._live()
            with conn.transaction(), conn.cursor() as cur:
                yield PgTx(cur)

    @contextmanager
    def read_tx(self) -> Iterator[PgTx]:
        """A read-only transaction."""
        with self._lock:
            conn = self._live()
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SET TRANSACTION READ ONLY")
                yield PgTx(cur)

    def setup(
        self, statements: Iterable[str], *, ready: Callable[[PgTx], bool], lock_name: str
    ) -> None:
        """Run schema statements once, under an advisory lock (concurrent first opens). They
        are skipped when `ready` says the schema exists: DDL would lock the tables against the
        processes already using them."""
        with self.write_tx() as tx:
            if ready(tx):
                return
            tx.run("SELECT pg_advisory_xact_lock(?)", (zlib.crc32(lock_name.encode()),))
            if ready(tx):
                return
            for statement in statements:
                tx.run(statement)

    def close(self) -> None:
        """Close the connection (for good)."""
        with self._lock:
            self._closed = True
            self.reset()
