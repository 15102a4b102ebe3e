"""The ledger outlives its database: restarts, outages, full disks, locks and lost commit replies.

Transient errors are retried with capped, jittered backoff on a fresh connection; a retried
write that had in fact committed is recognised, never repeated; `Worker.run` never dies on a
transient error; anything else still surfaces. The PostgreSQL tests restart the real server.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from attention_scoping.ledger import (
    Coordinator,
    EventKind,
    Lease,
    SqliteLedger,
    TaskStatus,
    Worker,
    WorkResult,
)
from attention_scoping.ledger.sql import SqlLedger, Tx
from attention_scoping.storage.retry import DatabaseUnavailableError, RetryPolicy, is_transient
from tests.ledger_support import (
    BACKENDS,
    backend_location,
    open_ledger,
    pg_ctl,
    pg_ctl_or_skip,
    raw_execute,
)

FAST = RetryPolicy(base=0.001, cap=0.01, deadline=30.0)
"""Retries without real waiting, for tests whose outage is injected."""


def completed_ids(ledger: SqlLedger) -> list[str]:
    return [e.task_id for e in ledger.events() if e.kind is EventKind.COMPLETED]


def psycopg_error(message: str) -> Exception:
    import psycopg

    return psycopg.OperationalError(message)


# -- telling transient errors from real ones ------------------------------------------------


def real_sqlite_lock_error(tmp_path: Path) -> sqlite3.OperationalError:
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        other.close()
    raise AssertionError("the second writer was not refused")


def real_sqlite_full_error(tmp_path: Path) -> sqlite3.OperationalError:
    conn = sqlite3.connect(tmp_path / "full.db", isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    try:
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 1000,)] * 50)
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("the capped file did not fill up")


def test_transient_errors_are_told_from_real_ones(tmp_path: Path) -> None:
    locked = real_sqlite_lock_error(tmp_path)
    full = real_sqlite_full_error(tmp_path)
    assert "locked" in str(locked) and "full" in str(full)
    assert is_transient(locked) and is_transient(full)
    assert is_transient(sqlite3.OperationalError("disk I/O error"))  # no error code: by text
    assert is_transient(DatabaseUnavailableError("still down"))

    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError) as missing:
        conn.execute("SELECT * FROM no_such_table")
    conn.execute("CREATE TABLE t (x PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sqlite3.IntegrityError) as duplicate:
        conn.execute("INSERT INTO t VALUES (1)")
    assert not is_transient(missing.value)
    assert not is_transient(duplicate.value)
    assert not is_transient(ValueError("bad task id"))


def test_psycopg_errors_are_classified_by_kind_and_sqlstate() -> None:
    psycopg = pytest.importorskip("psycopg")
    from psycopg import errors

    assert is_transient(errors.AdminShutdown("terminating connection"))  # pg_ctl restart
    assert is_transient(errors.CannotConnectNow("the database system is starting up"))
    assert is_transient(psycopg.OperationalError("connection refused"))
    assert is_transient(errors.SerializationFailure("could not serialize access"))
    assert not is_transient(errors.InvalidPassword("password authentication failed"))
    assert not is_transient(errors.UniqueViolation("duplicate key"))
    assert not is_transient(errors.UndefinedTable("relation does not exist"))
    assert not is_transient(psycopg.InterfaceError("bad use of the API"))


# -- the retry policy ------------------------------------------------------------------------


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def test_backoff_grows_exponentially_up_to_the_cap_with_jitter() -> None:
    low = RetryPolicy(base=0.1, cap=1.0, rand=lambda: 0.0)
    high = RetryPolicy(base=0.1, cap=1.0, rand=lambda: 0.999999)
    assert [round(low.delay(n), 3) for n in range(6)] == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]
    assert [round(high.delay(n), 3) for n in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert RetryPolicy(base=0.1, cap=1.0).delay(10_000) <= 1.0  # no overflow, capped
    with pytest.raises(ValueError, match="base <= cap"):
        RetryPolicy(base=2.0, cap=1.0)


def test_run_retries_transient_errors_after_a_reset_then_gives_up() -> None:
    fake = FakeTime()
    policy = RetryPolicy(
        base=1.0, cap=4.0, deadline=10.0, sleep=fake.sleep, clock=fake.clock, rand=lambda: 0.5
    )
    seen: list[bool] = []
    resets: list[int] = []

    def flaky(again: bool) -> str:
        seen.append(again)
        if len(seen) < 4:
            raise sqlite3.OperationalError("database is locked")
        return "ok"

    assert policy.run(flaky, what="op", reset=lambda: resets.append(1)) == "ok"
    assert seen == [False, True, True, True]  # retries know they are retries
    assert len(resets) == 3 and len(fake.slept) == 3
    assert fake.slept == [0.75, 1.5, 3.0]

    def down(_again: bool) -> str:
        raise sqlite3.OperationalError("disk I/O error")

    began = fake.now
    with pytest.raises(DatabaseUnavailableError, match="op: the database is unavailable") as info:
        policy.run(down, what="op")
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    assert fake.now - began >= 10.0  # the budget was spent waiting, not spinning
    assert max(fake.slept) == 3.0  # capped: 3/4 of the 4 s cap with this jitter draw

    calls: list[bool] = []

    def broken(again: bool) -> str:
        calls.append(again)
        raise sqlite3.IntegrityError("UNIQUE constraint failed")

    fake.slept.clear()
    with pytest.raises(sqlite3.IntegrityError):
        policy.run(broken, what="op")
    assert calls == [False] and fake.slept == []  # a real error: at once, no retry


# -- a commit that landed but whose answer was lost ------------------------------------------


@pytest.fixture(params=BACKENDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def ledger(kind: str, tmp_path: Path) -> Iterator[SqlLedger]:
    with backend_location(kind, tmp_path) as where:
        opened = open_ledger(kind, where, retry=FAST)
        yield opened
        opened.close()


def lose_commit_replies(
    monkeypatch: pytest.MonkeyPatch, ledger: SqlLedger, error: Callable[[], Exception]
) -> list[int]:
    """Every write commits, then raises `error()` once (the reply lost on the way back)."""
    original = ledger._transaction
    armed = [0]

    @contextmanager
    def lossy() -> Iterator[Tx]:
        with original() as tx:
            yield tx
        if armed[0] % 2 == 0:  # the first attempt of each operation
            armed[0] += 1
            raise error()
        armed[0] += 1

    monkeypatch.setattr(ledger, "_transaction", lossy)
    return armed


def test_a_retried_write_whose_commit_landed_is_not_repeated(
    kind: str, ledger: SqlLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    error = (
        (lambda: sqlite3.OperationalError("disk I/O error"))
        if kind == "sqlite"
        else (lambda: psycopg_error("server closed the connection unexpectedly"))
    )
    lose_commit_replies(monkeypatch, ledger, error)

    first = ledger.create({"n": 1}, task_id="one")
    batch = ledger.create_many([{"n": 2}, {"n": 3}])
    retried = ledger.create({"n": 4}, task_id="retried")
    assert first == "one" and len(batch) == 2
    assert sum(ledger.counts().values()) == 4  # each created once

    lease = ledger.claim("w1", lease_seconds=60)
    assert lease is not None and lease.task_id == "one"
    leased = [e for e in ledger.events() if e.kind is EventKind.LEASED]
    assert [e.lease_id for e in leased] == [lease.lease_id]  # one lease, the one returned
    lease = ledger.heartbeat(lease)
    receipt = ledger.complete(lease, "done", affected_ids=["x/1"])
    assert receipt.lease_id == lease.lease_id and receipt.status is TaskStatus.COMPLETED
    assert completed_ids(ledger) == ["one"]

    second = ledger.claim("w1", lease_seconds=60)
    assert second is not None
    assert ledger.fail(second, "upstream 503", retry=True) is None  # back to the pool, once
    assert ledger.task(second.task_id).status is TaskStatus.PENDING
    third = ledger.claim("w1", lease_seconds=60)
    assert third is not None
    failed = ledger.fail(third, "bad input")
    assert failed is not None and failed.status is TaskStatus.FAILED
    assert ledger.task(retried).status is TaskStatus.PENDING


def test_a_real_error_is_raised_at_once_and_not_retried(ledger: SqlLedger) -> None:
    ledger.create({"n": 1})
    raw_execute(ledger, f"DROP TABLE {ledger.receipts_table}")
    sleeps: list[float] = []
    ledger.retry = RetryPolicy(base=0.001, cap=0.01, sleep=sleeps.append)
    with pytest.raises(Exception) as info:
        ledger.receipts()
    assert not is_transient(info.value) and sleeps == []


# -- SQLite: a lock held too long, a full disk ------------------------------------------------


def run_workers(
    ledgers: list[SqlLedger],
    handle: Callable[[Lease], WorkResult],
    *,
    stop: threading.Event | None = None,
    errors: list[BaseException] | None = None,
    prefix: str = "w",
    **worker_kwargs: Any,
) -> tuple[threading.Event, list[threading.Thread], list[BaseException]]:
    """Start one `Worker.run` thread per ledger; returns (stop, threads, escaped errors)."""
    stop = stop if stop is not None else threading.Event()
    errors = errors if errors is not None else []

    def loop(ledger: SqlLedger, name: str) -> None:
        try:
            Worker(ledger, name, retry=FAST, **worker_kwargs).run(
                handle, stop=stop, idle_sleep=0.01
            )
        except BaseException as exc:  # pragma: no cover - asserted empty below
            errors.append(exc)

    threads = [
        threading.Thread(target=loop, args=(ledger, f"{prefix}{i}"), daemon=True)
        for i, ledger in enumerate(ledgers)
    ]
    for thread in threads:
        thread.start()
    return stop, threads, errors


def finish(
    stop: threading.Event, threads: list[threading.Thread], errors: list[BaseException]
) -> None:
    """Assert every worker is still alive, then stop them."""
    alive = [t.name for t in threads if t.is_alive()]
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert len(alive) == len(threads), "a worker loop died"


def work(lease: Lease) -> WorkResult:
    return WorkResult(f"result {lease.payload['n']}", [f"item/{lease.payload['n']}"])


class Signal(logging.Handler):
    """Sets an event when the retry module logs a transient error."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = threading.Event()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "transient database error" in record.getMessage():
            self.count += 1
            self.seen.set()


@pytest.fixture
def retries() -> Iterator[Signal]:
    signal = Signal()
    log = logging.getLogger("attention_scoping.storage.retry")
    log.addHandler(signal)
    yield signal
    log.removeHandler(signal)


def test_opening_a_sqlite_ledger_waits_out_a_lock_held_past_the_busy_timeout(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    SqliteLedger(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process keeps the write lock
    pauses: list[float] = []

    def release_later(seconds: float) -> None:
        if not pauses:  # the open met the lock: let it go
            holder.execute("COMMIT")
        pauses.append(seconds)

    policy = RetryPolicy(base=0.001, cap=0.01, sleep=release_later)
    ledger = SqliteLedger(path, busy_timeout=0.01, retry=policy)
    assert pauses, "the held lock was never met"
    task_id = ledger.create({"n": 1})
    assert ledger.task(task_id).status is TaskStatus.PENDING
    holder.close()
    ledger.close()


def test_sqlite_workers_wait_out_a_lock_held_past_the_busy_timeout(
    tmp_path: Path, retries: Signal
) -> None:
    path = tmp_path / "ledger.db"
    setup = SqliteLedger(path)
    tasks = setup.create_many([{"n": i} for i in range(40)])
    ledgers: list[SqlLedger] = [SqliteLedger(path, busy_timeout=0.01, retry=FAST) for _ in range(2)]
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process keeps the write lock
    stop, threads, errors = run_workers(ledgers, work)
    assert retries.seen.wait(30), "no lock timeout was met"
    assert not setup.receipts()
    holder.execute("COMMIT")
    holder.close()
    receipts = Coordinator(setup).wait(tasks, timeout=60, poll=0.01)
    finish(stop, threads, errors)
    assert {r.status for r in receipts} == {TaskStatus.COMPLETED}
    assert sorted(completed_ids(setup)) == sorted(tasks)  # none lost, none twice
    for ledger in [setup, *ledgers]:
        ledger.close()


def test_sqlite_workers_survive_a_full_disk(
    tmp_path: Path, retries: Signal, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.db"
    ledger = SqliteLedger(path, retry=RetryPolicy(base=0.001, cap=0.01, deadline=0.05))
    tasks = ledger.create_many([{"n": i, "pad": "x" * 500} for i in range(60)])
    disk = {"full": True}
    reopen = ledger.db._connect

    def capped() -> sqlite3.Connection:  # the file may not grow while the disk is full
        conn = reopen()
        if disk["full"]:
            conn.execute("PRAGMA max_page_count = 1")  # clamps to the current size
        return conn

    monkeypatch.setattr(ledger.db, "_connect", capped)
    ledger.db.reset()
    stop, threads, errors = run_workers([ledger], work)
    assert retries.seen.wait(30), "the disk never filled up"
    before = retries.count
    deadline = time.monotonic() + 30
    while retries.count < before + 5 and time.monotonic() < deadline:
        time.sleep(0.005)  # some more failing attempts, past the ledger's own retry budget
    disk["full"] = False  # space freed: the next reconnect may grow the file
    ledger.db.reset()
    receipts = Coordinator(ledger).wait(tasks, timeout=60, poll=0.01)
    finish(stop, threads, errors)
    assert len(receipts) == len(tasks)
    assert sorted(completed_ids(ledger)) == sorted(tasks)
    ledger.close()


def test_worker_run_keeps_going_through_unavailability_and_raises_real_errors(
    tmp_path: Path,
) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db", retry=FAST)
    tasks = ledger.create_many([{"n": i} for i in range(5)])
    real_claim = ledger.claim
    outage = {"left": 6}

    def claim(worker: str, **kwargs: Any) -> Lease | None:
        if outage["left"]:
            outage["left"] -= 1
            raise DatabaseUnavailableError("ledger claim: the database is unavailable")
        return real_claim(worker, **kwargs)

    ledger.claim = claim  # type: ignore[method-assign]
    worker = Worker(ledger, "w1", retry=FAST)
    assert worker.run(work, until_idle=True, idle_sleep=0.001) == 5
    assert outage["left"] == 0 and sorted(completed_ids(ledger)) == sorted(tasks)

    def broken(worker: str, **kwargs: Any) -> Lease | None:
        raise sqlite3.IntegrityError("CHECK constraint failed")

    ledger.claim = broken  # type: ignore[method-assign]
    with pytest.raises(sqlite3.IntegrityError):
        worker.run(work, until_idle=True, idle_sleep=0.001)
    ledger.close()


# -- PostgreSQL: the real server restarted, then down for a while ----------------------------


def test_workers_survive_postgres_restart_and_outage(tmp_path: Path) -> None:
    control = pg_ctl_or_skip()
    with backend_location("postgres", tmp_path) as where:
        policy = RetryPolicy(base=0.02, cap=0.2, deadline=1.0)  # outages outlast it
        setup = open_ledger("postgres", where)  # default budget: waits out the outage
        phases = [setup.create_many([{"n": i, "phase": p} for i in range(60)]) for p in range(3)]
        released = [threading.Event() for _ in phases]
        released[0].set()

        def handle(lease: Lease) -> WorkResult:
            released[lease.payload["phase"]].wait(120)  # mid-task while the server goes away
            return work(lease)

        ledgers = [open_ledger("postgres", where, retry=policy) for _ in range(5)]
        stop, threads, errors = run_workers(ledgers[:4], handle, lease_seconds=4)
        idle = run_workers(
            ledgers[4:], handle, stop=stop, errors=errors, prefix="idle", kinds=["idle"]
        )[1]
        threads += idle  # polls for work the whole time, outage included
        coordinator = Coordinator(setup)
        coordinator.wait(phases[0], timeout=120, poll=0.02)

        pg_ctl(control, "restart", "-m", "fast")  # every connection gets AdminShutdown
        released[1].set()
        coordinator.wait(phases[1], timeout=120, poll=0.02)

        pg_ctl(control, "stop", "-m", "fast")
        released[2].set()
        time.sleep(2.0)  # down for a while: longer than each operation's retry budget
        pg_ctl(control, "restart")  # starts it again with the options it last ran with
        everything = [t for phase in phases for t in phase]
        receipts = coordinator.wait(everything, timeout=120, poll=0.05)
        finish(stop, threads, errors)

        assert {r.status for r in receipts} == {TaskStatus.COMPLETED}
        done = completed_ids(setup)
        assert len(done) == len(set(done)) == len(everything)  # 0 lost, 0 completed twice
        assert {r.worker for r in receipts} <= {"w0", "w1", "w2", "w3"}
        for ledger in [setup, *ledgers]:
            ledger.close()


def test_postgres_ledger_reconnects_when_its_connection_is_killed(tmp_path: Path) -> None:
    with backend_location("postgres", tmp_path) as where:
        import psycopg

        ledger = open_ledger("postgres", where, retry=FAST)
        pid = ledger.db.conn.info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(where["dsn"], autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert ledger.counts()[TaskStatus.PENDING] == 0  # the in-flight call reconnects
        assert ledger.db.conn.info.backend_pid != pid  # type: ignore[attr-defined]
        task = ledger.create({"n": 1})
        assert ledger.task(task).status is TaskStatus.PENDING
        ledger.close()
