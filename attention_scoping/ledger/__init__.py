"""Append-only task ledger: expiring leases, receipts, SQLite (default) and PostgreSQL backends.

Its storage (connections, transactions, retries) is `attention_scoping.storage`, which the
safety stores share; `RetryPolicy` and friends are re-exported here.

```python
from attention_scoping.ledger import Coordinator, SqliteLedger, Worker, WorkResult

ledger = SqliteLedger("tasks.db")
task_id = Coordinator(ledger).post({"issue": 42, "label": "bug"})
Worker(ledger, "w1").run_one(lambda lease: WorkResult("labelled", ["issue/42"]))
Coordinator(ledger).receipt(task_id)   # status, content_sha256, affected_ids
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.ledger.bounds import MAX_DELAY_SECONDS, MAX_LEASE_SECONDS
    from attention_scoping.ledger.interface import (
        AlreadyCompletedError,
        EventKind,
        Lease,
        LeaseLostError,
        LedgerError,
        LedgerEvent,
        NotALedgerError,
        Receipt,
        TaskExistsError,
        TaskInfo,
        TaskLedger,
        TaskStatus,
        UnknownTaskError,
        content_sha256,
    )
    from attention_scoping.ledger.postgres import PostgresLedger
    from attention_scoping.ledger.roles import Coordinator, Worker, WorkResult
    from attention_scoping.ledger.sql import DEFAULT_MAX_ATTEMPTS
    from attention_scoping.ledger.sqlite import SqliteLedger
    from attention_scoping.storage.retry import DatabaseUnavailableError, RetryPolicy, is_transient

_EXPORTS = {
    "DEFAULT_MAX_ATTEMPTS": "sql",
    "MAX_DELAY_SECONDS": "bounds",
    "MAX_LEASE_SECONDS": "bounds",
    "AlreadyCompletedError": "interface",
    "content_sha256": "interface",
    "Coordinator": "roles",
    "DatabaseUnavailableError": "roles",  # defined in attention_scoping.storage.retry
    "EventKind": "interface",
    "is_transient": "roles",  # defined in attention_scoping.storage.retry
    "Lease": "interface",
    "LeaseLostError": "interface",
    "LedgerError": "interface",
    "LedgerEvent": "interface",
    "NotALedgerError": "interface",
    "PostgresLedger": "postgres",
    "Receipt": "interface",
    "RetryPolicy": "roles",  # defined in attention_scoping.storage.retry
    "SqliteLedger": "sqlite",
    "TaskExistsError": "interface",
    "TaskInfo": "interface",
    "TaskLedger": "interface",
    "TaskStatus": "interface",
    "UnknownTaskError": "interface",
    "Worker": "roles",
    "WorkResult": "roles",
}

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "MAX_DELAY_SECONDS",
    "MAX_LEASE_SECONDS",
    "AlreadyCompletedError",
    "Coordinator",
    "DatabaseUnavailableError",
    "EventKind",
    "Lease",
    "LeaseLostError",
    "LedgerError",
    "LedgerEvent",
    "NotALedgerError",
    "PostgresLedger",
    "Receipt",
    "RetryPolicy",
    "SqliteLedger",
    "TaskExistsError",
    "TaskInfo",
    "TaskLedger",
    "TaskStatus",
    "UnknownTaskError",
    "WorkResult",
    "Worker",
    "content_sha256",
    "is_transient",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
