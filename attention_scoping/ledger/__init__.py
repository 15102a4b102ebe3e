"""Append-only task ledger: expiring leases, receipts, SQLite (default) and PostgreSQL backends.

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

_EXPORTS = {
    "DEFAULT_MAX_ATTEMPTS": "sql",
    "AlreadyCompletedError": "interface",
    "content_sha256": "interface",
    "Coordinator": "roles",
    "EventKind": "interface",
    "Lease": "interface",
    "LeaseLostError": "interface",
    "LedgerError": "interface",
    "LedgerEvent": "interface",
    "PostgresLedger": "postgres",
    "Receipt": "interface",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
