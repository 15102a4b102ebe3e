"""The ledger refuses what it would silently get wrong (issue 25, build item 9): leases and
delays that are not finite or absurdly long (a task leased forever or never claimable), and a
file that is not a ledger (empty, not SQLite, another application's database)."""

from __future__ import annotations

import math
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from attention_scoping.ledger import (
    MAX_DELAY_SECONDS,
    MAX_LEASE_SECONDS,
    Coordinator,
    NotALedgerError,
    SqliteLedger,
    TaskStatus,
    Worker,
)
from attention_scoping.ledger.sql import SqlLedger
from attention_scoping.safety.token_stores import SqliteTokenStore
from tests.ledger_support import ledger_fixtures
from tests.safety_support import FakeClock

kind, clock, factory, ledger = ledger_fixtures()

BAD_SECONDS: list[Any] = [math.nan, math.inf, -math.inf, -1.0, 1e12, True, "30", None]


def _nothing_open(ledger: SqlLedger) -> bool:
    counts = ledger.counts()
    return counts[TaskStatus.PENDING] == counts[TaskStatus.LEASED] == 0


@pytest.mark.parametrize("bad", [*BAD_SECONDS, 0.0, MAX_LEASE_SECONDS + 1])
def test_claim_refuses_a_lease_that_is_not_finite_positive_and_bounded(
    ledger: SqlLedger, bad: Any
) -> None:
    task = ledger.create({"n": 1})
    with pytest.raises((ValueError, TypeError), match="lease_seconds must be a finite number"):
        ledger.claim("w", lease_seconds=bad)
    assert ledger.task(task).status is TaskStatus.PENDING and ledger.task(task).attempts == 0


def test_the_longest_lease_and_delay_are_accepted(ledger: SqlLedger, clock: FakeClock) -> None:
    task = ledger.create({"n": 1}, delay=MAX_DELAY_SECONDS)
    assert ledger.claim("w") is None  # not due for a year
    clock.advance(MAX_DELAY_SECONDS)
    lease = ledger.claim("w", lease_seconds=MAX_LEASE_SECONDS)
    assert lease is not None and lease.task_id == task
    assert lease.expires_at == clock() + MAX_LEASE_SECONDS


@pytest.mark.parametrize("bad", [*BAD_SECONDS, MAX_DELAY_SECONDS + 1])
def test_create_refuses_a_delay_that_is_not_finite_non_negative_and_bounded(
    ledger: SqlLedger, bad: Any
) -> None:
    with pytest.raises((ValueError, TypeError), match="delay must be a finite number"):
        ledger.create({"n": 1}, delay=bad)
    assert _nothing_open(ledger) and ledger.events() == []


@pytest.mark.parametrize("bad", [math.nan, math.inf, 0.0, 1e12])
def test_heartbeat_refuses_an_unbounded_extension(ledger: SqlLedger, bad: float) -> None:
    ledger.create({"n": 1})
    lease = ledger.claim("w", lease_seconds=30)
    assert lease is not None
    with pytest.raises(ValueError, match="lease_seconds"):
        ledger.heartbeat(lease, lease_seconds=bad)
    assert ledger.task(lease.task_id).ready_at == lease.expires_at  # unchanged


@pytest.mark.parametrize("bad", [math.nan, math.inf, -5.0, 1e12])
def test_fail_refuses_a_retry_delay_out_of_bounds(ledger: SqlLedger, bad: float) -> None:
    ledger.create({"n": 1})
    lease = ledger.claim("w", lease_seconds=30)
    assert lease is not None
    with pytest.raises(ValueError, match="retry_after"):
        ledger.fail(lease, "flaky", retry=True, retry_after=bad)
    assert ledger.task(lease.task_id).status is TaskStatus.LEASED


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"lease_seconds": math.inf}, "lease_seconds"),
        ({"lease_seconds": 1e12}, "lease_seconds"),
        ({"lease_seconds": math.nan}, "lease_seconds"),
        ({"heartbeat_every": math.nan}, "heartbeat_every"),
        ({"heartbeat_every": -1.0}, "heartbeat_every"),
    ],
)
def test_a_worker_with_unbounded_durations_fails_at_construction(
    ledger: SqlLedger, options: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValueError, match=f"{named} must be a finite number"):
        Worker(ledger, "w", **options)


def test_coordinator_wait_refuses_a_nan_timeout(ledger: SqlLedger) -> None:
    task = Coordinator(ledger).post({"n": 1})
    with pytest.raises(ValueError, match="timeout must be"):
        Coordinator(ledger).wait([task], timeout=math.nan)
    with pytest.raises(ValueError, match="poll must be"):
        Coordinator(ledger).wait([task], timeout=1, poll=0)


# -- the SQLite file ---------------------------------------------------------------------------


def _foreign_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('Ada')")
    conn.commit()
    conn.close()


def _ledger_shaped_but_not(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE ledger_tasks (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda p: p.write_bytes(b""), "is an empty file (0 bytes), not a ledger"),
        (lambda p: p.write_text("task_id,status\n1,done\n"), "is not a SQLite database"),
        (lambda p: p.write_bytes(bytes(range(256)) * 8), "is not a SQLite database"),
        (
            lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000),
            "cannot be read as a SQLite database",
        ),
        (_foreign_db, "is another application's SQLite database (tables: customers)"),
        (_ledger_shaped_but_not, "has a table 'ledger_tasks' that is not the ledger's"),
    ],
)
def test_a_file_that_is_not_a_ledger_is_refused_and_left_alone(
    tmp_path: Path, make: Any, expected: str
) -> None:
    path = tmp_path / "tasks.db"
    make(path)
    before = path.read_bytes()
    with pytest.raises(NotALedgerError) as caught:
        SqliteLedger(path)
    assert expected in str(caught.value) and str(path) in str(caught.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks.db"]  # no -wal, no -shm


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotALedgerError, match="is not a file"):
        SqliteLedger(tmp_path)


def test_a_new_path_becomes_a_ledger_and_opens_again(tmp_path: Path) -> None:
    path = tmp_path / "new" / "tasks.db"
    path.parent.mkdir()
    with SqliteLedger(path) as first:
        task = first.create({"n": 1})
    with SqliteLedger(path) as again:
        assert again.task(task).status is TaskStatus.PENDING
    assert not list(path.parent.glob("*.new*"))  # the temporary build is gone


def test_a_ledger_file_may_hold_other_tables_and_the_safety_stores(tmp_path: Path) -> None:
    """The documented sharing still works: the safety stores' file becomes a ledger too, and a
    ledger to which an application added a table opens."""
    path = tmp_path / "shared.db"
    store = SqliteTokenStore(path)
    store.close()
    with SqliteLedger(path) as ledger:
        ledger.create({"n": 1})
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    with SqliteLedger(path) as ledger:
        assert ledger.counts()[TaskStatus.PENDING] == 1


def test_many_openers_of_a_new_path_all_get_the_one_ledger(tmp_path: Path) -> None:
    """Workers started together on a path that does not exist yet: none sees a half-made
    (0-byte) file, all open the same ledger."""
    path = tmp_path / "tasks.db"
    barrier = threading.Barrier(6)
    errors: list[BaseException] = []
    opened: list[SqliteLedger] = []
    lock = threading.Lock()

    def open_one() -> None:
        barrier.wait()
        try:
            ledger = SqliteLedger(path)
        except BaseException as exc:
            errors.append(exc)
            return
        with lock:
            opened.append(ledger)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    task = opened[0].create({"n": 1})
    assert all(ledger.task(task).task_id == task for ledger in opened)
    for ledger in opened:
        ledger.close()
