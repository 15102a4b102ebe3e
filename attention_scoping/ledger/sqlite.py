"""The SQLite ledger (the default): one file, no server, safe with many processes.

WAL lets readers (a coordinator polling receipts) run beside the writer; every write takes the
file's lock up front (`BEGIN IMMEDIATE`), so a claim's read-check-update is never interleaved
with another process's. Waits for the lock are bounded by `busy_timeout`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from attention_scoping.ledger.retry import RetryPolicy
from attention_scoping.ledger.sql import DEFAULT_MAX_ATTEMPTS, SqlLedger
from attention_scoping.ledger.sqlite_db import SqliteDatabase, Synchronous

__all__ = ["SqliteLedger"]


def _schema(tasks: str, events: str, receipts: str) -> list[str]:
    guard = "BEGIN SELECT RAISE(ABORT, '{t} is append-only'); END"
    out = [
        f"""CREATE TABLE IF NOT EXISTS {tasks} (
            task_id TEXT PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL,
            status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER,
            ready_at REAL, lease_id TEXT, worker TEXT, created_seq INTEGER NOT NULL,
            created_at REAL NOT NULL, updated_at REAL NOT NULL)""",
        f"""CREATE INDEX IF NOT EXISTS {tasks}_ready ON {tasks} (ready_at, created_seq)
            WHERE status IN ('pending', 'leased')""",
        f"""CREATE TABLE IF NOT EXISTS {events} (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, kind TEXT NOT NULL,
            at REAL NOT NULL, worker TEXT, lease_id TEXT, attempt INTEGER, data TEXT NOT NULL)""",
        f"CREATE INDEX IF NOT EXISTS {events}_task ON {events} (task_id, seq)",
        f"""CREATE TABLE IF NOT EXISTS {receipts} (
            task_id TEXT PRIMARY KEY, status TEXT NOT NULL, content_sha256 TEXT,
            affected_ids TEXT NOT NULL, worker TEXT NOT NULL, lease_id TEXT NOT NULL,
            attempt INTEGER NOT NULL, completed_at REAL NOT NULL, seq INTEGER NOT NULL,
            error TEXT)""",
        f"CREATE INDEX IF NOT EXISTS {receipts}_seq ON {receipts} (seq)",
    ]
    for table in (events, receipts):
        for op in ("UPDATE", "DELETE"):
            out.append(
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table} "
                + guard.format(t=table)
            )
    return out


class SqliteLedger(SqlLedger):
    """`TaskLedger` in one SQLite file; open one per process (threads may share it).

    Example:
        ```python
        ledger = SqliteLedger("tasks.db")
        task_id = ledger.create({"issue": 42, "action": "label", "label": "bug"})
        lease = ledger.claim("worker-1", lease_seconds=60)        # in a worker process
        receipt = ledger.complete(lease, output_text, affected_ids=["issue/42"])
        ```

    Args:
        path: The database file (created if missing; may hold other tables too).
        clock: Seconds since the epoch; inject a fake one in tests.
        max_attempts: Leases a task gets before it is failed (None: unlimited).
        synchronous: `FULL` (default) survives power loss; `NORMAL` only process crashes.
        busy_timeout: Seconds to wait for the write lock before the error counts as transient.
        retry: How transient errors (lock timeouts, disk I/O, disk full) are retried;
            `RetryPolicy()` by default (capped exponential backoff with jitter, 60 s budget).
    """

    db: SqliteDatabase

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        max_attempts: int | None = DEFAULT_MAX_ATTEMPTS,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 30.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        """Open the file and create the ledger's tables if needed."""
        super().__init__(clock=clock, max_attempts=max_attempts, retry=retry)
        self.db = SqliteDatabase(path, synchronous=synchronous, busy_timeout=busy_timeout)
        schema = _schema(self.tasks_table, self.events_table, self.receipts_table)
        self.db.setup(schema, retry=self.retry, what="ledger open")  # waits out a held lock
