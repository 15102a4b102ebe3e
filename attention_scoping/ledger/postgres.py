"""The PostgreSQL ledger: for workers on many machines sharing one server.

Claims lock the chosen row with `FOR UPDATE SKIP LOCKED`: concurrent workers skip rows another
transaction is claiming instead of queueing behind it, so claims scale with workers and a task
is never handed to two of them. Needs `psycopg` (`pip install -e ".[postgres]"` from a clone).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from attention_scoping.ledger.sql import DEFAULT_MAX_ATTEMPTS, SqlLedger, Tx
from attention_scoping.storage.postgres import PostgresDatabase, check_identifier
from attention_scoping.storage.retry import RetryPolicy

__all__ = ["PostgresLedger"]


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
        retry: How transient errors (a restart, a failover, a dropped connection) are retried
            on a new connection; `RetryPolicy()` by default (capped exponential backoff with
            jitter, 60 s budget). The first connection, in the constructor, is not retried: a
            wrong DSN fails at once.
    """

    db: PostgresDatabase

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
        retry: RetryPolicy | None = None,
    ) -> None:
        """Connect and create the ledger's tables if needed."""
        check_identifier(schema)
        super().__init__(clock=clock, max_attempts=max_attempts, retry=retry)
        self.schema = schema
        if schema:
            for attr in ("tasks_table", "events_table", "receipts_table"):
                setattr(self, attr, f'"{schema}".{getattr(self, attr)}')
        self.db = PostgresDatabase(dsn, connect_timeout=connect_timeout, name="ledger")
        self.db.setup(
            _schema(self.schema, "ledger_tasks", "ledger_events", "ledger_receipts"),
            ready=self._ready,
            lock_name=f"attention_scoping.ledger:{self.schema}",
        )

    def _ready(self, tx: Tx) -> bool:
        """Whether the tables and their append-only triggers all exist."""
        rows = tx.rows(
            "SELECT count(*) FROM pg_trigger "
            "WHERE tgname IN ('ledger_events_append_only', 'ledger_receipts_append_only') "
            "AND tgrelid IN (to_regclass(?), to_regclass(?)) AND to_regclass(?) IS NOT NULL",
            (self.events_table, self.receipts_table, self.tasks_table),
        )
        return int(rows[0][0]) == 2
