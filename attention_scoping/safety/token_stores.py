"""Where single-use is remembered: used token ids and issued confirmation codes.

A signed token proves who issued it and what it is bound to, but not that it was never used:
that needs shared memory. `MemoryTokenStore` serves one process (thread-safe) and warns when it
finds itself serving several (`SharedMemoryStoreWarning`); `SqliteTokenStore` (one file) and
`PostgresTokenStore` (one server) make single-use hold across every process that opens them.
Any object with the `TokenStore` methods works (Redis...): each method must be atomic.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import warnings
from abc import ABC
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar, runtime_checkable

from attention_scoping.storage.database import Database, Tx
from attention_scoping.storage.postgres import PgTx, PostgresDatabase, check_identifier
from attention_scoping.storage.retry import RetryPolicy
from attention_scoping.storage.sqlite import SqliteDatabase, SqliteStore

__all__ = [
    "CodeRecord",
    "MemoryTokenStore",
    "PostgresTokenStore",
    "SharedMemoryStoreWarning",
    "SqlTokenStore",
    "SqliteTokenStore",
    "TokenStore",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class CodeRecord:
    """A confirmation code as the server keeps it: bound to one intent hash.

    `code_id` is a keyed hash of the code, never the code itself, so a copy of the store does
    not hand out usable codes.
    """

    code_id: str
    intent_hash: str
    issued_at: float
    expires_at: float
    used_at: float | None = None
    revoked_at: float | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class TokenStore(Protocol):
    """Atomic single-use bookkeeping for tokens and confirmation codes."""

    def claim_token(self, token_id: str, expires_at: float, now: float) -> bool:
        """Mark a token id used; True only for the first claim of that id."""
        ...

    def is_token_used(self, token_id: str) -> bool:
        """Whether a token id has been claimed."""
        ...

    def put_code(self, record: CodeRecord) -> None:
        """Store a newly issued code (its id must be new)."""
        ...

    def get_code(self, code_id: str) -> CodeRecord | None:
        """The stored code, or None."""
        ...

    def use_code(self, code_id: str, now: float) -> bool:
        """Mark a code used; True only if it was unused and unrevoked until now."""
        ...

    def revoke_code(self, code_id: str, now: float) -> bool:
        """Revoke an unused code; True if it was live."""
        ...

    def purge(self, now: float) -> int:
        """Forget records that expired before `now` (they are refused by expiry anyway)."""
        ...


class SharedMemoryStoreWarning(RuntimeWarning):
    """An in-memory token store is serving several processes or stores: single use is not
    enforced between them (a token used in one could be used again in another)."""


_SHARED_ADVICE = (
    "single use is then not enforced between them: give every process the same durable store "
    "(SqliteTokenStore(path) or PostgresTokenStore(dsn))"
)


class MemoryTokenStore:
    """In-process `TokenStore`, safe under threads; forgets everything when the process ends.

    It warns (`SharedMemoryStoreWarning`, once) when it is used in a process other than the one
    that created it (a fork), or meets a token issued beside another store (another worker
    process resuming the graph, or a second store in this process).
    """

    def __init__(self) -> None:
        """Create an empty store."""
        self._lock = threading.Lock()
        self._tokens: dict[str, float] = {}
        self._codes: dict[str, CodeRecord] = {}
        self.instance_id = secrets.token_hex(8)
        """Written into the tokens issued beside this store, to recognise foreign ones."""
        self._pid = os.getpid()
        self._warned = False

    def _warn(self, why: str) -> None:
        if not self._warned:
            self._warned = True
            message = f"MemoryTokenStore {why}; {_SHARED_ADVICE}"
            logger.warning(message)
            warnings.warn(message, SharedMemoryStoreWarning, stacklevel=4)

    def _check_process(self) -> None:
        if os.getpid() != self._pid:
            self._warn(f"created in process {self._pid} is used in process {os.getpid()}")

    def check_shared(self, issued_by: Any) -> None:
        """Warn if a token was issued beside another store (`issued_by`: its `mem` claim)."""
        self._check_process()
        if issued_by != self.instance_id:
            self._warn("received a token issued by another worker (another process or store)")

    def claim_token(self, token_id: str, expires_at: float, now: float) -> bool:
        """Mark a token id used; True only for the first claim."""
        self._check_process()
        with self._lock:
            if token_id in self._tokens:
                return False
            self._tokens[token_id] = expires_at
            return True

    def is_token_used(self, token_id: str) -> bool:
        """Whether a token id has been claimed."""
        with self._lock:
            return token_id in self._tokens

    def put_code(self, record: CodeRecord) -> None:
        """Store a newly issued code."""
        self._check_process()
        with self._lock:
            if record.code_id in self._codes:
                msg = "confirmation code collision; issue a new one"
                raise ValueError(msg)
            self._codes[record.code_id] = record

    def get_code(self, code_id: str) -> CodeRecord | None:
        """The stored code, or None."""
        with self._lock:
            return self._codes.get(code_id)

    def use_code(self, code_id: str, now: float) -> bool:
        """Mark a code used if it is still live."""
        self._check_process()
        return self._settle(code_id, "used_at", now)

    def revoke_code(self, code_id: str, now: float) -> bool:
        """Revoke an unused code."""
        return self._settle(code_id, "revoked_at", now)

    def _settle(self, code_id: str, stamp: str, now: float) -> bool:
        """Stamp a live code (`used_at` or `revoked_at`); False when it is gone, used or revoked."""
        with self._lock:
            record = self._codes.get(code_id)
            if record is None or record.used_at is not None or record.revoked_at is not None:
                return False
            changes: dict[str, Any] = {stamp: now}
            self._codes[code_id] = replace(record, **changes)
            return True

    def purge(self, now: float) -> int:
        """Drop expired records."""
        with self._lock:
            tokens = [k for k, exp in self._tokens.items() if exp < now]
            codes = [k for k, rec in self._codes.items() if rec.expires_at < now]
            for key in tokens:
                del self._tokens[key]
            for key in codes:
                del self._codes[key]
            return len(tokens) + len(codes)


_CODE_COLUMNS = "code_id, intent_hash, issued_at, expires_at, used_at, revoked_at, data"


class SqlTokenStore(ABC):
    """`TokenStore` over SQL, the same statements on every backend; each method is one
    transaction, retried on transient errors (a restart, a lock held too long).

    A retried claim whose first attempt committed unseen answers "already used": single use
    fails closed (the approval is asked again), never open.
    """

    tokens_table = "safety_used_tokens"
    codes_table = "safety_codes"
    db: Database
    """The connection every method runs through (opened by the subclass)."""

    def __init__(self, *, retry: RetryPolicy | None = None) -> None:
        """Keep the retry policy."""
        self.retry = retry if retry is not None else RetryPolicy()

    def close(self) -> None:
        """Release the connection."""
        self.db.close()

    def _do(self, what: str, op: Callable[[Tx], T], *, write: bool = True) -> T:
        def attempt(_again: bool) -> T:
            with self.db.write_tx() if write else self.db.read_tx() as tx:
                return op(tx)

        return self.retry.run(attempt, what=f"token store {what}", reset=self.db.reset)

    def claim_token(self, token_id: str, expires_at: float, now: float) -> bool:
        """Mark a token id used; True only for the first claim, in any process."""
        sql = (
            f"INSERT INTO {self.tokens_table} (token_id, expires_at, used_at) VALUES (?, ?, ?) "
            "ON CONFLICT (token_id) DO NOTHING"
        )
        return self._do("claim", lambda tx: tx.run(sql, (token_id, expires_at, now)) == 1)

    def is_token_used(self, token_id: str) -> bool:
        """Whether a token id has been claimed."""
        sql = f"SELECT 1 FROM {self.tokens_table} WHERE token_id = ?"
        return self._do("lookup", lambda tx: bool(tx.rows(sql, (token_id,))), write=False)

    def put_code(self, record: CodeRecord) -> None:
        """Store a newly issued code.

        Raises:
            ValueError: the code id exists (the issuer draws another code).
        """
        sql = (
            f"INSERT INTO {self.codes_table} ({_CODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (code_id) DO NOTHING"
        )
        values = (
            record.code_id,
            record.intent_hash,
            record.issued_at,
            record.expires_at,
            record.used_at,
            record.revoked_at,
            json.dumps(dict(record.data)),
        )
        if self._do("put_code", lambda tx: tx.run(sql, values)) != 1:
            msg = "confirmation code collision; issue a new one"
            raise ValueError(msg)

    def get_code(self, code_id: str) -> CodeRecord | None:
        """The stored code, or None."""
        sql = f"SELECT {_CODE_COLUMNS} FROM {self.codes_table} WHERE code_id = ?"
        rows = self._do("get_code", lambda tx: tx.rows(sql, (code_id,)), write=False)
        if not rows:
            return None
        cid, ihash, issued, expires, used, revoked, data = rows[0]
        return CodeRecord(cid, ihash, issued, expires, used, revoked, json.loads(data))

    def _mark(self, what: str, column: str, code_id: str, now: float) -> bool:
        sql = (
            f"UPDATE {self.codes_table} SET {column} = ? "
            "WHERE code_id = ? AND used_at IS NULL AND revoked_at IS NULL"
        )
        return self._do(what, lambda tx: tx.run(sql, (now, code_id)) == 1)

    def use_code(self, code_id: str, now: float) -> bool:
        """Mark a code used if it is still live (compare-and-set, so one caller wins)."""
        return self._mark("use_code", "used_at", code_id, now)

    def revoke_code(self, code_id: str, now: float) -> bool:
        """Revoke an unused code."""
        return self._mark("revoke_code", "revoked_at", code_id, now)

    def purge(self, now: float) -> int:
        """Drop expired records."""

        def op(tx: Tx) -> int:
            a = tx.run(f"DELETE FROM {self.tokens_table} WHERE expires_at < ?", (now,))
            return a + tx.run(f"DELETE FROM {self.codes_table} WHERE expires_at < ?", (now,))

        return self._do("purge", op)


_SQLITE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS safety_used_tokens (
        token_id TEXT PRIMARY KEY, expires_at REAL NOT NULL, used_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS safety_codes (
        code_id TEXT PRIMARY KEY, intent_hash TEXT NOT NULL, issued_at REAL NOT NULL,
        expires_at REAL NOT NULL, used_at REAL, revoked_at REAL, data TEXT NOT NULL)""",
)


class SqliteTokenStore(SqliteStore, SqlTokenStore):
    """`TokenStore` in a SQLite file: single use holds across every process that opens it.

    Example:
        ```python
        store = SqliteTokenStore("safety.db")       # the same file in every worker process
        issuer = TokenIssuer(store=store)            # key from $ATTENTION_SCOPING_SECRET
        ```
    """

    db: SqliteDatabase
    SCHEMA = _SQLITE_SCHEMA
    LABEL = "token store"


def _pg_schema(q: str) -> list[str]:
    return [
        f"""CREATE TABLE IF NOT EXISTS {q}safety_used_tokens (
            token_id TEXT PRIMARY KEY, expires_at DOUBLE PRECISION NOT NULL,
            used_at DOUBLE PRECISION NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {q}safety_codes (
            code_id TEXT PRIMARY KEY, intent_hash TEXT NOT NULL,
            issued_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
            used_at DOUBLE PRECISION, revoked_at DOUBLE PRECISION, data TEXT NOT NULL)""",
    ]


class PostgresTokenStore(SqlTokenStore):
    """`TokenStore` on a PostgreSQL server: single use holds across machines (open one per
    process; threads may share it). Needs `psycopg`.

    Example:
        ```python
        store = PostgresTokenStore("postgresql://app@db.internal/app", schema="agents")
        gate = ApprovalGate(TokenIssuer(store=store))
        ```

    Args:
        dsn: A libpq connection string or URL.
        schema: PostgreSQL schema holding the tables (created if missing); None uses the
            connection's `search_path`.
        connect_timeout: Seconds to wait for the server.
        retry: How transient errors are retried (`RetryPolicy()`).
    """

    db: PostgresDatabase

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        connect_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        """Connect and create the store's tables if needed."""
        check_identifier(schema)
        super().__init__(retry=retry)
        q = f'"{schema}".' if schema else ""
        self.tokens_table = f"{q}safety_used_tokens"
        self.codes_table = f"{q}safety_codes"
        self.db = PostgresDatabase(dsn, connect_timeout=connect_timeout, name="token store")
        statements = ([f'CREATE SCHEMA IF NOT EXISTS "{schema}"'] if schema else []) + _pg_schema(q)
        self.db.setup(statements, ready=self._ready, lock_name=f"attention_scoping.tokens:{schema}")

    def _ready(self, tx: PgTx) -> bool:
        rows = tx.rows(
            "SELECT to_regclass(?) IS NOT NULL AND to_regclass(?) IS NOT NULL",
            (self.tokens_table, self.codes_table),
        )
        return bool(rows[0][0])
