"""Shared SQL storage: one connection per process to SQLite or PostgreSQL, and the retry of
transient database failures.

The task ledger (`ledger`), the intent journal and the token stores (`safety`) and the approval
middleware all store through it, so every table of the package is reached the same way:
explicit transactions, a reconnect after a restart, bounded retries with backoff. Framework-free;
PostgreSQL needs `psycopg` (the `postgres` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.storage.database import Database, Tx
    from attention_scoping.storage.postgres import PgTx, PostgresDatabase, check_identifier
    from attention_scoping.storage.retry import (
        Backoff,
        DatabaseUnavailableError,
        RetryPolicy,
        is_transient,
    )
    from attention_scoping.storage.sqlite import SqliteDatabase, SqliteTx, Synchronous

_EXPORTS = {
    "Backoff": "retry",
    "check_identifier": "postgres",
    "Database": "database",
    "DatabaseUnavailableError": "retry",
    "is_transient": "retry",
    "PgTx": "postgres",
    "PostgresDatabase": "postgres",
    "RetryPolicy": "retry",
    "SqliteDatabase": "sqlite",
    "SqliteTx": "sqlite",
    "Synchronous": "sqlite",
    "Tx": "database",
}

__all__ = [
    "Backoff",
    "Database",
    "DatabaseUnavailableError",
    "PgTx",
    "PostgresDatabase",
    "RetryPolicy",
    "SqliteDatabase",
    "SqliteTx",
    "Synchronous",
    "Tx",
    "check_identifier",
    "is_transient",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
