"""The SQLite ledger (the default): one file, no server, safe with many processes.

WAL lets readers (a coordinator polling receipts) run beside the writer; every write takes the
file's lock up front (`BEGIN IMMEDIATE`), so a claim's read-check-update is never interleaved
with another process's. Waits for the lock are bounded by `busy_timeout`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from attention_scoping.ledger.interface import NotALedgerError
from attention_scoping.ledger.sql import DEFAULT_MAX_ATTEMPTS, SqlLedger
from attention_scoping.storage.retry import RetryPolicy
from attention_scoping.storage.sqlite import SqliteDatabase, Synchronous

__all__ = ["SqliteLedger", "check_ledger_file"]

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite 3 database file."""

LEDGER_COLUMNS = {
    "ledger_tasks": frozenset(
        "task_id kind payload status attempts max_attempts ready_at lease_id worker created_seq "
        "created_at updated_at".split()
    ),
    "ledger_events": frozenset("seq task_id kind at worker lease_id attempt data".split()),
    "ledger_receipts": frozenset(
        "task_id status content_sha256 affected_ids worker lease_id attempt completed_at seq "
        "error".split()
    ),
}
"""The columns each ledger table must have (an existing table of that name without them is
another application's)."""

PACKAGE_PREFIXES = ("ledger_", "safety_")
"""Tables this package creates; a file holding only these may become a ledger."""


def _tables(path: Path, busy_timeout: float) -> dict[str, frozenset[str]]:
    """The tables of the database at `path` and their columns, read without changing the file
    (read-only, no journal-mode switch)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout)
    try:
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {  # columns of the ledger's names only: the others need no look
            name: frozenset(row[1] for row in conn.execute(f'PRAGMA table_info("{name}")'))
            if name in LEDGER_COLUMNS
            else frozenset()
            for name in names
        }
    finally:
        conn.close()


def check_ledger_file(path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
    """Refuse a file at `path` that is not a ledger and should not silently become one.

    A missing path passes (the ledger creates it). Refused with `NotALedgerError`: something
    that is not a regular file, an empty (0-byte) file, a file that is not a SQLite database,
    a database whose `ledger_*` tables lack the ledger's columns, and a database holding tables
    of its own but none of the ledger's (another application's; the package's `safety_*`
    tables may share the file).
    """
    where = Path(path)
    try:
        info = where.stat()
    except FileNotFoundError:
        return
    if not where.is_file():
        msg = f"{str(where)!r} is not a file; a ledger needs a file path"
        raise NotALedgerError(msg)
    fresh = "remove it, or pass a path that does not exist yet to create a ledger"
    if info.st_size == 0:
        msg = f"{str(where)!r} is an empty file (0 bytes), not a ledger: {fresh}"
        raise NotALedgerError(msg)
    with where.open("rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        msg = f"{str(where)!r} is not a SQLite database, so not a ledger: {fresh}"
        raise NotALedgerError(msg)
    try:
        tables = _tables(where, busy_timeout)
    except sqlite3.DatabaseError as exc:
        msg = f"{str(where)!r} cannot be read as a SQLite database ({exc}): {fresh}"
        raise NotALedgerError(msg) from None
    for name, columns in tables.items():
        wanted = LEDGER_COLUMNS.get(name)
        if wanted is not None and not wanted <= columns:
            missing = ", ".join(sorted(wanted - columns))
            msg = f"{str(where)!r} has a table {name!r} that is not the ledger's (no {missing})"
            raise NotALedgerError(msg)
    foreign = sorted(t for t in tables if not t.startswith(PACKAGE_PREFIXES))
    if foreign and not any(t in LEDGER_COLUMNS for t in tables):
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        msg = (
            f"{str(where)!r} is another application's SQLite database (tables: {shown}), not a "
            f"ledger: {fresh}"
        )
        raise NotALedgerError(msg)


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
        path: The database file: created if missing; an existing one must be a ledger (it may
            hold other tables too) or hold only the package's tables (`safety_*`). An empty
            (0-byte) file, a file that is not SQLite, or another application's database is
            refused with `NotALedgerError` rather than silently made a ledger.
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
        """Open the file and create the ledger's tables if needed.

        Raises:
            NotALedgerError: the file exists but is not a ledger (see `check_ledger_file`).
        """
        super().__init__(clock=clock, max_attempts=max_attempts, retry=retry)
        check_ledger_file(path, busy_timeout=busy_timeout)
        self.db = SqliteDatabase(path, synchronous=synchronous, busy_timeout=busy_timeout)
        schema = _schema(self.tasks_table, self.events_table, self.receipts_table)
        self.db.setup(schema, retry=self.retry, what="ledger open")  # waits out a held lock
