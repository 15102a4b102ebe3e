"""Append-only task ledger: expiring leases, receipts, SQLite (default) and PostgreSQL backends.

```python
from attention_scoping.ledger import Coordinator, SqliteLedger, Worker, WorkResult

ledger = SqliteLedger("tasks.db")
task_id = Coordinator(ledger).post({"issue": 42, "label": "bug"})
Worker(ledger, "w1").run_one(lambda lease: WorkResult("labelled", ["issue/42"]))
Coordinator(ledger).receipt(task_id)   # status, content_sha256, affected_ids
```
"""

from attention_scoping.ledger.interface import (
    AlreadyCompletedError,
    EventKind,
    Lease,
    LeaseLostError,
    LedgerError,
    LedgerEvent,
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

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "AlreadyCompletedError",
    "Coordinator",
    "EventKind",
    "Lease",
    "LeaseLostError",
    "LedgerError",
    "LedgerEvent",
    "PostgresLedger",
    "Receipt",
    "SqliteLedger",
    "TaskExistsError",
    "TaskInfo",
    "TaskLedger",
    "TaskStatus",
    "UnknownTaskError",
    "WorkResult",
    "Worker",
    "content_sha256",
]
