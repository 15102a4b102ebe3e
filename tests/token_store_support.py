"""Durable token stores for the shared test suite: SQLite in a temp file, PostgreSQL in a fresh
schema of the test server (skipped, with the reason, when `ATTENTION_SCOPING_TEST_PG_DSN` is not
set; see `tests/ledger_support.py`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attention_scoping.safety import ReplayedTokenError, TokenIssuer
from attention_scoping.safety.token_stores import (
    PostgresTokenStore,
    SqliteTokenStore,
    SqlTokenStore,
)
from attention_scoping.storage.retry import RetryPolicy
from tests.ledger_support import backend_location

DURABLE = ("sqlite", "postgres")


@contextmanager
def token_store_location(kind: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Where a store of `kind` lives (`{"path": ...}` or `{"dsn": ..., "schema": ...}`)."""
    with backend_location(kind, tmp_path) as where:
        if kind == "sqlite":
            where = {"path": str(tmp_path / "tokens.db")}
        yield where


def open_token_store(kind: str, where: dict[str, Any], **kwargs: Any) -> SqlTokenStore:
    """A new store object (a new connection) on the backend at `where`."""
    kwargs.setdefault("retry", RetryPolicy(base=0.001, cap=0.01, deadline=10.0))
    if kind == "sqlite":
        return SqliteTokenStore(where["path"], **kwargs)
    return PostgresTokenStore(where["dsn"], schema=where["schema"], **kwargs)


def race_to_consume(issuers: Sequence[TokenIssuer], token: str, intent_hash: str) -> list[str]:
    """Every issuer consumes `token` at the same moment (one thread each, released together);
    the sorted outcomes, "ok" or "replayed" (a single-use token: exactly one "ok")."""
    start = threading.Barrier(len(issuers))
    outcomes: list[str] = []

    def use(issuer: TokenIssuer) -> None:
        start.wait()
        try:
            issuer.consume(token, intent_hash)
            outcomes.append("ok")
        except ReplayedTokenError:
            outcomes.append("replayed")

    threads = [threading.Thread(target=use, args=(issuer,)) for issuer in issuers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(outcomes)
