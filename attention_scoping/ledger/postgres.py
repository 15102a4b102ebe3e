"""The PostgreSQL ledger: for workers on many machines sharing one server.

Claims lock the chosen row with `FOR UPDATE SKIP LOCKED`: concurrent workers skip rows another
transaction is claiming instead of queueing behind it, so claims scale with workers and a task
is never handed to two of them. Needs `psycopg` (`pip install -e ".[postgres]"` from a clone).
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from attention_scoping.core.extras import install_hint
from attention_scoping.ledger.sql import DEFAULT_MAX_ATTEMPTS, SqlLedger, Tx

__all__ = ["PostgresLedger"]

_IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class _PgTx:
    def __init__(self, cur: Any) -> None:
        self.cur = cur

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.cur.execute(sql.replace("?", "%s"), tuple(params) or None)
        return list(self.cur.fetchall()) if self.cur.description is not None else []

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self.cur.execute(sql.replace("?", "%s"), tuple(params) or None)
        return int(self.cur.rowcount)


def _schema(schema: str | None, tasks: str, events: str, receipts: str) -> list[str]:
    q = f'"{schema}".' if schema else ""
    fn = f"{q}{events}_append_only"
    out = []
    if schema:
        out.append(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    out += [
        f"""CREATE TABLE IF NOT EXISTS {q}{tasks} (
            task_id TEXT PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL,
            status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER,
            ready_at DOUBLE PRECISION, lease_id TEXT, worker TEXT, created_seq BIGINT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)""",
        f"""CREATE INDEX IF NOT EXISTS {tasks}_ready ON {q}{tasks} (ready_at, created_seq)
            WHERE status IN ('pending', 'leased')""",
        f"""CREATE TABLE IF NOT EXISTS {q}{events} (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, task_id TEXT NOT NULL,
            kind TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, worker TEXT, lease_id TEXT,
            attempt INTEGER, data TEXT NOT NULL)""",
        f"CREATE INDEX IF NOT EXISTS {events}_task ON {q}{events} (task_id, seq)",
        f"""CREATE TABLE IF NOT EXISTS {q}{receipts} (
            task_id TEXT PRIMARY KEY, status TEXT NOT NULL, content_sha256 TEXT,
            affected_ids TEXT NOT NULL, worker TEXT NOT NULL, lease_id TEXT NOT NULL,
            attempt INTEGER NOT NULL, completed_at DOUBLE PRECISION NOT NULL,
            seq BIGINT NOT NULL, error TEXT)""",
        f"CREATE INDEX IF NOT EXISTS {receipts}_seq ON {q}{receipts} (seq)",
        f"""CREATE OR REPLACE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$""",
    ]
    for table in (events, receipts):
        out.append(
            f"CREATE OR REPLACE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE "
            f"ON {q}{table} FOR EACH ROW EXECUTE FUNCTION {fn}()"
        )
    return out


class PostgresLedger(SqlLedger):
    """`TaskLedger` on a PostgreSQL server; open one per process (threads may share it).

    Example:
        ```python
        ledger = PostgresLedger("postgresql://app@db.internal/app", schema="agents")
        lease = ledger.claim("worker-7", lease_seconds=60)
        ```

    Args:
        dsn: A libpq connection string or URL.
        schema: PostgreSQL schema holding the tables (created if missing); None uses the
            connection's `search_path`.
        clock: Seconds since the epoch. Leases compare times from every worker's clock, so keep
            machines NTP-synchronized and leases much longer than their skew.
        max_attempts: Leases a task gets before it is failed (None: unlimited).
        connect_timeout: Seconds to wait for the server.
    """

    lock_clause = " FOR UPDATE SKIP LOCKED"
    row_lock = " FOR UPDATE"

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        clock: Callable[[], float] = time.time,
        max_attempts: int | None = DEFAULT_MAX_ATTEMPTS,
        connect_timeout: float = 10.0,
    ) -> None:
        """Connect and create the ledger's tables if needed."""
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the install
            msg = f"PostgresLedger needs psycopg: {install_hint('postgres')}"
            raise ImportError(msg) from exc
        if schema is not None and not _IDENT.match(schema):
            msg = f"schema must be a lower-case SQL identifier, not {schema!r}"
            raise ValueError(msg)
        super().__init__(clock=clock, max_attempts=max_attempts)
        self.schema = schema
        if schema:
            for attr in ("tasks_table", "events_table", "receipts_table"):
                setattr(self, attr, f'"{schema}".{getattr(self, attr)}')
        self._lock = threading.RLock()
        self._connect = lambda: psycopg.connect(
            dsn, autocommit=True, connect_timeout=max(1, int(connect_timeout))
        )
        self._conn = self._connect()
        self._setup()

    def _ready(self, tx: Tx) -> bool:
        """Whether the tables and their append-only triggers all exist."""
        rows = tx.rows(
            "SELECT count(*) FROM pg_trigger "
            "WHERE tgname IN ('ledger_events_append_only', 'ledger_receipts_append_only') "
            "AND tgrelid IN (to_regclass(?), to_regclass(?)) AND to_regclass(?) IS NOT NULL",
            (self.events_table, self.receipts_table, self.tasks_table),
        )
        return int(rows[0][0]) == 2

    def _setup(self) -> None:
        """Create the schema once. DDL is skipped when it exists: it would lock the tables
        against the workers already using them."""
        with self._transaction() as tx:
            if self._ready(tx):
                return
            key = zlib.crc32(f"attention_scoping.ledger:{self.schema}".encode())
            tx.run("SELECT pg_advisory_xact_lock(?)", (key,))  # concurrent first opens
            if self._ready(tx):
                return
            for statement in _schema(
                self.schema, "ledger_tasks", "ledger_events", "ledger_receipts"
            ):
                tx.run(statement)

    def _live(self) -> Any:
        """The connection, reopened if the server dropped it (a restart, a failover)."""
        if self._conn.broken:
            self._conn = self._connect()
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[Tx]:
        with self._lock:
            conn = self._live()
            with conn.transaction(), conn.cursor() as cur:
                yield _PgTx(cur)

    @contextmanager
    def _read(self) -> Iterator[Tx]:
        with self._lock:
            conn = self._live()
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SET TRANSACTION READ ONLY")
                yield _PgTx(cur)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
