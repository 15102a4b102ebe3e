"""One suite for both durable token stores (SQLite file, PostgreSQL server): single use holds
across connections and workers, outages are retried, and nothing warns about sharing."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from attention_scoping.approval.middleware import ApprovalGate
from attention_scoping.ledger.sql import Tx
from attention_scoping.safety.token_stores import SharedMemoryStoreWarning, SqlTokenStore
from attention_scoping.safety.tokens import ReplayedTokenError, TokenIssuer, tool_call_hash
from attention_scoping.storage.retry import RetryPolicy
from tests.safety_support import SECRET, FakeClock
from tests.token_store_support import (
    DURABLE,
    open_token_store,
    race_to_consume,
    token_store_location,
)

H1 = tool_call_hash("jobs__create", {"when": "09:00"})

Opener = Callable[[], SqlTokenStore]


@pytest.fixture(params=DURABLE)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def opener(kind: str, tmp_path: Path) -> Iterator[Opener]:
    opened: list[SqlTokenStore] = []
    with token_store_location(kind, tmp_path) as where:

        def make() -> SqlTokenStore:
            store = open_token_store(kind, where)
            opened.append(store)
            return store

        yield make
        for store in opened:
            store.close()


def test_a_token_used_through_one_connection_is_used_for_all(opener: Opener) -> None:
    clock = FakeClock()
    first = TokenIssuer(SECRET, store=opener(), clock=clock)
    second = TokenIssuer(SECRET, store=opener(), clock=clock)
    token = first.issue(H1)
    second.consume(token, H1)
    with pytest.raises(ReplayedTokenError):
        first.consume(token, H1)
    code = first.issue_code(H1)
    assert second.redeem_code(code.code, H1).intent_hash == H1
    with pytest.raises(ReplayedTokenError):
        first.redeem_code(code.code, H1)


def test_concurrent_workers_with_their_own_connections_one_wins(opener: Opener) -> None:
    issuer = TokenIssuer(SECRET, store=opener())
    token = issuer.issue(H1)
    workers = [TokenIssuer(SECRET, store=opener()) for _ in range(6)]
    assert race_to_consume(workers, token, H1) == ["ok"] + ["replayed"] * 5


def test_two_approval_workers_on_one_store_refuse_a_replay_without_warning(
    opener: Opener,
) -> None:
    clock = FakeClock()
    worker_1 = ApprovalGate(TokenIssuer(SECRET, store=opener(), clock=clock))
    worker_2 = ApprovalGate(TokenIssuer(SECRET, store=opener(), clock=clock))
    token = worker_1.request("t", {"a": 1}, thread_id="th")["approval_token"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SharedMemoryStoreWarning)
        receipt, refusal = worker_2.verify("t", {"a": 1}, token, thread_id="th")
        assert refusal is None and receipt is not None
        _, refusal = worker_1.verify("t", {"a": 1}, token, thread_id="th")
    assert refusal is not None and refusal["reason"] == "replayed"


def test_a_rejection_burns_the_token_for_every_worker(opener: Opener) -> None:
    worker_1 = ApprovalGate(TokenIssuer(SECRET, store=opener()))
    worker_2 = ApprovalGate(TokenIssuer(SECRET, store=opener()))
    token_id = worker_1._token_id("t", {"a": 1}, "call-1", "th", 0)
    value = worker_1.request(
        "t", {"a": 1}, tool_call_id="call-1", thread_id="th", token_id=token_id
    )
    worker_1.burn("t", {"a": 1}, token_id=token_id, expires_at=value["expires_at"], thread_id="th")
    _, refusal = worker_2.verify("t", {"a": 1}, value["approval_token"], thread_id="th")
    assert refusal is not None and refusal["reason"] == "replayed"


def lose_next_commit_reply(
    kind: str, store: SqlTokenStore, monkeypatch: pytest.MonkeyPatch
) -> list[bool]:
    """The store's next write commits, then its answer is lost (a transient error)."""
    if kind == "sqlite":
        error: Exception = sqlite3.OperationalError("disk I/O error")
    else:
        import psycopg

        error = psycopg.OperationalError("server closed the connection unexpectedly")
    original = store.db.write_tx
    armed = [True]

    @contextmanager
    def lossy() -> Iterator[Tx]:
        with original() as tx:
            yield tx
        if armed:
            armed.clear()
            raise error

    monkeypatch.setattr(store.db, "write_tx", lossy)
    return armed


def test_a_use_whose_commit_reply_was_lost_fails_closed(
    kind: str, opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = opener()
    issuer = TokenIssuer(SECRET, store=store)
    token = issuer.issue(H1)
    token_id = issuer.verify(token, H1).token_id
    armed = lose_next_commit_reply(kind, store, monkeypatch)
    with pytest.raises(ReplayedTokenError):  # retried: the id is taken, by the lost attempt
        issuer.consume(token, H1)
    assert not armed and store.is_token_used(token_id)
    code = issuer.issue_code(H1)
    armed = lose_next_commit_reply(kind, store, monkeypatch)
    with pytest.raises(ReplayedTokenError):
        issuer.redeem_code(code.code, H1)
    assert not armed


def test_postgres_store_reconnects_after_its_connection_is_killed(tmp_path: Path) -> None:
    with token_store_location("postgres", tmp_path) as where:
        import psycopg

        store = open_token_store("postgres", where)
        issuer = TokenIssuer(SECRET, store=store)
        pid = store.db.conn.info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(where["dsn"], autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        token = issuer.issue(H1)
        assert issuer.consume(token, H1).intent_hash == H1  # retried on a new connection
        with pytest.raises(ReplayedTokenError):
            issuer.consume(token, H1)
        store.close()


def test_sqlite_store_waits_out_a_held_lock(tmp_path: Path) -> None:
    import sqlite3

    with token_store_location("sqlite", tmp_path) as where:
        store = open_token_store("sqlite", where)
        store.db.busy_timeout = 0.01  # type: ignore[attr-defined]
        store.db.reset()
        holder = sqlite3.connect(where["path"], isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        released: list[Any] = []

        def release_later(seconds: float) -> None:
            if not released:  # the store met the lock: let it go
                released.append(seconds)
                holder.execute("COMMIT")

        store.retry = RetryPolicy(base=0.001, cap=0.01, sleep=release_later)
        issuer = TokenIssuer(SECRET, store=store)
        token = issuer.issue(H1)
        assert issuer.consume(token, H1).intent_hash == H1
        assert released, "the lock was never met"
        holder.close()
        store.close()
