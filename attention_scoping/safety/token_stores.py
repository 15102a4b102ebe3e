"""Where single-use is remembered: used token ids and issued confirmation codes.

A signed token proves who issued it and what it is bound to, but not that it was never used:
that needs shared memory. `MemoryTokenStore` serves one process (thread-safe);
`SqliteTokenStore` makes single-use hold across processes sharing one file. Any object with the
`TokenStore` methods works (Redis, PostgreSQL...): each method must be atomic.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from attention_scoping.ledger.sqlite_db import SqliteDatabase, Synchronous

__all__ = ["CodeRecord", "MemoryTokenStore", "SqliteTokenStore", "TokenStore"]


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


class MemoryTokenStore:
    """In-process `TokenStore`, safe under threads; forgets everything when the process ends."""

    def __init__(self) -> None:
        """Create an empty store."""
        self._lock = threading.Lock()
        self._tokens: dict[str, float] = {}
        self._codes: dict[str, CodeRecord] = {}

    def claim_token(self, token_id: str, expires_at: float, now: float) -> bool:
        """Mark a token id used; True only for the first claim."""
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
        with self._lock:
            record = self._codes.get(code_id)
            if record is None or record.used_at is not None or record.revoked_at is not None:
                return False
            self._codes[code_id] = replace(record, used_at=now)
            return True

    def revoke_code(self, code_id: str, now: float) -> bool:
        """Revoke an unused code."""
        with self._lock:
            record = self._codes.get(code_id)
            if record is None or record.used_at is not None or record.revoked_at is not None:
                return False
            self._codes[code_id] = replace(record, revoked_at=now)
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


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS safety_used_tokens (
        token_id TEXT PRIMARY KEY, expires_at REAL NOT NULL, used_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS safety_codes (
        code_id TEXT PRIMARY KEY, intent_hash TEXT NOT NULL, issued_at REAL NOT NULL,
        expires_at REAL NOT NULL, used_at REAL, revoked_at REAL, data TEXT NOT NULL)""",
)


class SqliteTokenStore:
    """`TokenStore` in a SQLite file: single-use holds across every process that opens it.

    Example:
        ```python
        store = SqliteTokenStore("safety.db")       # the same file in every worker process
        issuer = TokenIssuer(store=store)            # key from $ATTENTION_SCOPING_SECRET
        ```
    """

    def __init__(self, path: str | os.PathLike[str], *, synchronous: Synchronous = "FULL") -> None:
        """Open or create the store's tables in the file at `path`."""
        self.db = SqliteDatabase(path, synchronous=synchronous)
        self.db.setup(_SCHEMA)

    def claim_token(self, token_id: str, expires_at: float, now: float) -> bool:
        """Mark a token id used; True only for the first claim, in any process."""
        with self.db.write() as conn:
            cur = conn.execute(
                "INSERT INTO safety_used_tokens (token_id, expires_at, used_at) VALUES (?, ?, ?) "
                "ON CONFLICT (token_id) DO NOTHING",
                (token_id, expires_at, now),
            )
            return cur.rowcount == 1

    def is_token_used(self, token_id: str) -> bool:
        """Whether a token id has been claimed."""
        rows = self.db.query("SELECT 1 FROM safety_used_tokens WHERE token_id = ?", (token_id,))
        return bool(rows)

    def put_code(self, record: CodeRecord) -> None:
        """Store a newly issued code."""
        with self.db.write() as conn:
            cur = conn.execute(
                "INSERT INTO safety_codes (code_id, intent_hash, issued_at, expires_at, used_at, "
                "revoked_at, data) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code_id) DO NOTHING",
                (
                    record.code_id,
                    record.intent_hash,
                    record.issued_at,
                    record.expires_at,
                    record.used_at,
                    record.revoked_at,
                    json.dumps(dict(record.data)),
                ),
            )
            if cur.rowcount != 1:
                msg = "confirmation code collision; issue a new one"
                raise ValueError(msg)

    def get_code(self, code_id: str) -> CodeRecord | None:
        """The stored code, or None."""
        rows = self.db.query(
            "SELECT code_id, intent_hash, issued_at, expires_at, used_at, revoked_at, data "
            "FROM safety_codes WHERE code_id = ?",
            (code_id,),
        )
        if not rows:
            return None
        cid, ihash, issued, expires, used, revoked, data = rows[0]
        return CodeRecord(cid, ihash, issued, expires, used, revoked, json.loads(data))

    def use_code(self, code_id: str, now: float) -> bool:
        """Mark a code used if it is still live (compare-and-set, so one caller wins)."""
        with self.db.write() as conn:
            cur = conn.execute(
                "UPDATE safety_codes SET used_at = ? "
                "WHERE code_id = ? AND used_at IS NULL AND revoked_at IS NULL",
                (now, code_id),
            )
            return cur.rowcount == 1

    def revoke_code(self, code_id: str, now: float) -> bool:
        """Revoke an unused code."""
        with self.db.write() as conn:
            cur = conn.execute(
                "UPDATE safety_codes SET revoked_at = ? "
                "WHERE code_id = ? AND used_at IS NULL AND revoked_at IS NULL",
                (now, code_id),
            )
            return cur.rowcount == 1

    def purge(self, now: float) -> int:
        """Drop expired records."""
        with self.db.write() as conn:
            a = conn.execute("DELETE FROM safety_used_tokens WHERE expires_at < ?", (now,))
            b = conn.execute("DELETE FROM safety_codes WHERE expires_at < ?", (now,))
            return a.rowcount + b.rowcount

    def close(self) -> None:
        """Close the file."""
        self.db.close()
