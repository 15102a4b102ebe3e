"""One test suite for every ledger backend: SQLite (file) and PostgreSQL (a real server)."""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

import pytest

from attention_scoping.ledger import (
    AlreadyCompletedError,
    Coordinator,
    EventKind,
    LeaseLostError,
    TaskExistsError,
    TaskStatus,
    UnknownTaskError,
    Worker,
    WorkResult,
)
from attention_scoping.ledger.sql import SqlLedger
from tests.ledger_support import (
    LedgerFactory,
    claimed,
    ledger_fixtures,
    raw_execute,
)
from tests.safety_support import FakeClock

kind, clock, factory, ledger = ledger_fixtures()


def kinds_of(ledger: SqlLedger, task_id: str) -> list[str]:
    return [e.kind.value for e in ledger.events(task_id)]


def test_claim_leases_oldest_pending_task_with_its_payload(
    ledger: SqlLedger, clock: FakeClock
) -> None:
    first = ledger.create({"n": 1})
    clock.advance(1)
    second = ledger.create({"n": 2}, task_id="task-2")
    assert second == "task-2"
    lease = claimed(ledger, "w1", lease_seconds=30)
    assert (lease.task_id, lease.worker, lease.attempt) == (first, "w1", 1)
    assert lease.payload == {"n": 1}
    assert lease.expires_at == clock.now + 30
    other = ledger.claim("w2", lease_seconds=30)
    assert other is not None and other.task_id == second  # never the leased one
    assert ledger.claim("w3") is None
    info = ledger.task(first)
    assert info.status is TaskStatus.LEASED and info.worker == "w1" and info.attempts == 1
    assert kinds_of(ledger, first) == ["created", "leased"]


def test_expired_lease_returns_task_to_the_pool(ledger: SqlLedger, clock: FakeClock) -> None:
    task = ledger.create({"n": 1})
    old = claimed(ledger, "w1", lease_seconds=10)
    clock.advance(9.9)
    assert ledger.claim("w2", lease_seconds=10) is None  # still leased
    clock.advance(0.1)
    new = ledger.claim("w2", lease_seconds=10)
    assert new is not None and new.task_id == task and new.attempt == 2
    events = ledger.events(task)
    assert [e.kind for e in events] == [
        EventKind.CREATED,
        EventKind.LEASED,
        EventKind.EXPIRED,
        EventKind.LEASED,
    ]
    assert events[2].worker == "w1" and events[2].lease_id == old.lease_id


def test_stale_holder_cannot_complete_or_heartbeat_after_lease_was_stolen(
    ledger: SqlLedger, clock: FakeClock
) -> None:
    task = ledger.create({"n": 1})
    stale = claimed(ledger, "w1", lease_seconds=5)
    clock.advance(6)
    fresh = claimed(ledger, "w2", lease_seconds=5)
    with pytest.raises(LeaseLostError, match="worker 'w2' holds the task"):
        ledger.complete(stale, "late result")
    with pytest.raises(LeaseLostError):
        ledger.heartbeat(stale)
    receipt = ledger.complete(fresh, "fresh result", affected_ids=["issue/1"])
    assert receipt.worker == "w2" and receipt.attempt == 2
    with pytest.raises(AlreadyCompletedError, match="by worker 'w2'"):
        ledger.complete(stale, "late result")
    assert kinds_of(ledger, task).count("completed") == 1


def test_swept_lease_refuses_its_holder_and_frees_the_task(
    ledger: SqlLedger, clock: FakeClock
) -> None:
    task = ledger.create({"n": 1})
    lease = claimed(ledger, "w1", lease_seconds=5)
    assert ledger.expire_leases() == 0
    clock.advance(5)
    assert ledger.expire_leases() == 1
    info = ledger.task(task)
    assert info.status is TaskStatus.PENDING and info.worker is None
    with pytest.raises(LeaseLostError, match="went back to the pool"):
        ledger.complete(lease, "x")
    assert ledger.claim("w2") is not None


def test_double_completion_is_refused(ledger: SqlLedger) -> None:
    task = ledger.create({"n": 1})
    lease = claimed(ledger, "w1")
    first = ledger.complete(lease, "out")
    with pytest.raises(AlreadyCompletedError, match="by this lease"):
        ledger.complete(lease, "out again")
    with pytest.raises(AlreadyCompletedError):
        ledger.fail(lease, "late failure")
    assert ledger.receipts() == [first]
    assert kinds_of(ledger, task) == ["created", "leased", "completed"]


def test_heartbeat_extends_the_lease(ledger: SqlLedger, clock: FakeClock) -> None:
    ledger.create({"n": 1})
    lease = claimed(ledger, "w1", lease_seconds=10)
    clock.advance(8)
    renewed = ledger.heartbeat(lease)
    assert renewed.expires_at == clock.now + 10 and renewed.lease_id == lease.lease_id
    clock.advance(8)  # past the original expiry, within the renewed one
    assert ledger.claim("w2") is None
    assert ledger.complete(renewed, "ok").worker == "w1"


def test_receipt_carries_output_hash_and_affected_ids(ledger: SqlLedger, clock: FakeClock) -> None:
    tasks = [ledger.create({"n": i}) for i in range(3)]
    receipts = []
    for i in range(3):
        lease = claimed(ledger, f"w{i}")
        clock.advance(1)
        receipts.append(ledger.complete(lease, f"output {i}", affected_ids=[f"r/{i}", "shared"]))
    r0 = ledger.receipt(tasks[0])
    assert r0 is not None
    assert r0.content_sha256 == hashlib.sha256(b"output 0").hexdigest()
    assert r0.affected_ids == ("r/0", "shared") and r0.status is TaskStatus.COMPLETED
    assert r0.completed_at == receipts[0].completed_at
    assert [r.task_id for r in ledger.receipts()] == tasks
    assert [r.task_id for r in ledger.receipts(after_seq=receipts[0].seq)] == tasks[1:]
    assert [r.task_id for r in ledger.receipts(task_ids=[tasks[2]])] == [tasks[2]]
    assert ledger.receipts(task_ids=[]) == []
    sha = hashlib.sha256(b"precomputed").hexdigest()
    ledger.create({"n": 9}, task_id="pre")
    lease = claimed(ledger, "w9")
    assert ledger.complete(lease, content_sha256=sha).content_sha256 == sha
    with pytest.raises(ValueError, match="not both"):
        ledger.complete(lease, "x", content_sha256=sha)


def test_fail_with_retry_then_for_good(ledger: SqlLedger, clock: FakeClock) -> None:
    task = ledger.create({"n": 1})
    lease = claimed(ledger, "w1")
    assert ledger.fail(lease, "flaky upstream", retry=True, retry_after=60) is None
    assert ledger.task(task).status is TaskStatus.PENDING
    assert ledger.claim("w2") is None  # not before retry_after
    clock.advance(60)
    again = ledger.claim("w2")
    assert again is not None and again.attempt == 2
    receipt = ledger.fail(again, "bad input")
    assert receipt is not None and receipt.status is TaskStatus.FAILED
    assert receipt.error == "bad input" and receipt.content_sha256 is None
    assert ledger.task(task).status is TaskStatus.FAILED
    assert kinds_of(ledger, task) == ["created", "leased", "failed", "leased", "failed"]


def test_poison_task_is_failed_after_max_attempts(factory: LedgerFactory, clock: FakeClock) -> None:
    ledger = factory(max_attempts=2)
    task = ledger.create({"kills": "every worker"})
    for worker in ("w1", "w2"):
        lease = ledger.claim(worker, lease_seconds=5)
        assert lease is not None and lease.task_id == task
        clock.advance(5)  # the worker died
    ledger.create({"n": 2}, task_id="healthy")
    nxt = ledger.claim("w3")  # the poison task is failed on the way, not leased a third time
    assert nxt is not None and nxt.task_id == "healthy"
    receipt = ledger.receipt(task)
    assert receipt is not None and receipt.status is TaskStatus.FAILED
    assert "attempt 2 of 2" in (receipt.error or "")
    with pytest.raises(ValueError, match="max_attempts"):
        factory(max_attempts=0)


def test_retry_stops_at_max_attempts(factory: LedgerFactory) -> None:
    ledger = factory(max_attempts=1)
    task = ledger.create({"n": 1})
    lease = claimed(ledger, "w1")
    receipt = ledger.fail(lease, "boom", retry=True)
    assert receipt is not None and receipt.status is TaskStatus.FAILED
    assert ledger.task(task).status is TaskStatus.FAILED


def test_event_log_and_receipts_are_append_only(ledger: SqlLedger) -> None:
    ledger.create({"n": 1})
    lease = claimed(ledger, "w1")
    ledger.complete(lease, "x")
    for sql in (
        f"UPDATE {ledger.events_table} SET kind = 'completed'",
        f"DELETE FROM {ledger.events_table}",
        f"UPDATE {ledger.receipts_table} SET status = 'failed'",
        f"DELETE FROM {ledger.receipts_table}",
    ):
        with pytest.raises(Exception, match="append-only"):
            raw_execute(ledger, sql)
    assert len(ledger.events()) == 3 and len(ledger.receipts()) == 1


def test_bad_ids_and_duplicates(ledger: SqlLedger) -> None:
    ledger.create({"n": 1}, task_id="t1")
    with pytest.raises(TaskExistsError, match="'t1' already exists"):
        ledger.create({"n": 2}, task_id="t1")
    assert ledger.task("t1").payload == {"n": 1}
    assert len(ledger.events("t1")) == 1  # the refused create left no event
    with pytest.raises(UnknownTaskError):
        ledger.receipt("nope")
    with pytest.raises(UnknownTaskError):
        ledger.task("nope")
    with pytest.raises(ValueError, match="non-empty"):
        ledger.create({}, task_id="")
    with pytest.raises(ValueError, match="lease_seconds"):
        ledger.claim("w", lease_seconds=0)


def test_kinds_counts_and_bulk_create(ledger: SqlLedger) -> None:
    ids = ledger.create_many([{"n": i} for i in range(5)])
    ledger.create({"doc": 1}, kind="docs", task_id="d1")
    assert len(set(ids)) == 5
    lease = ledger.claim("w", kinds=["docs"])
    assert lease is not None and lease.task_id == "d1" and lease.kind == "docs"
    assert ledger.claim("w", kinds=["other"]) is None
    assert ledger.counts() == {
        TaskStatus.PENDING: 5,
        TaskStatus.LEASED: 1,
        TaskStatus.COMPLETED: 0,
        TaskStatus.FAILED: 0,
    }


def test_coordinator_reads_receipts_and_waits(ledger: SqlLedger) -> None:
    coordinator = Coordinator(ledger)
    assert not hasattr(coordinator, "events") and not hasattr(coordinator, "claim")
    task = coordinator.post({"issue": 1})
    assert coordinator.receipt(task) is None
    slept: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:  # the worker finishes while the coordinator waits
        slept.append(seconds)
        now[0] += seconds
        Worker(ledger, "w1").run_one(lambda lease: WorkResult("done", ["issue/1"]))

    (receipt,) = coordinator.wait([task], timeout=5, poll=0.5, sleep=sleep, clock=lambda: now[0])
    assert receipt.affected_ids == ("issue/1",) and slept == [0.5]
    assert coordinator.progress()["completed"] == 1
    other = coordinator.post({"issue": 2})
    ticks = iter(range(100))
    with pytest.raises(TimeoutError, match=other):
        coordinator.wait(
            [task, other], timeout=3, poll=1, sleep=lambda s: None, clock=lambda: next(ticks)
        )


def test_worker_completes_retries_and_detects_a_lost_lease(
    ledger: SqlLedger, clock: FakeClock
) -> None:
    ledger.create({"n": 1}, task_id="ok")
    worker = Worker(ledger, "w1", lease_seconds=10, heartbeat_every=3600)
    receipt = worker.run_one(lambda lease: WorkResult(f"did {lease.payload['n']}", ["x/1"]))
    assert receipt is not None and receipt.content_sha256 == hashlib.sha256(b"did 1").hexdigest()

    ledger.create({"n": 2}, task_id="flaky")

    def boom(lease: Any) -> WorkResult:
        raise RuntimeError("upstream 503")

    assert worker.run_one(boom) is None  # back to the pool
    assert ledger.task("flaky").status is TaskStatus.PENDING
    assert [e.data.get("error") for e in ledger.events("flaky") if e.kind is EventKind.FAILED] == [
        "RuntimeError: upstream 503"
    ]

    def slow(lease: Any) -> WorkResult:  # the lease expires mid-work and another worker takes it
        clock.advance(11)
        assert ledger.claim("w2", lease_seconds=10) is not None
        return WorkResult("too late")

    with pytest.raises(LeaseLostError):
        worker.run_one(slow)
    assert ledger.receipt("flaky") is None
    assert worker.run_one(boom) is None  # nothing claimable: w2 holds it


def test_worker_heartbeat_thread_keeps_a_long_task(ledger: SqlLedger, clock: FakeClock) -> None:
    ledger.create({"n": 1}, task_id="long")
    worker = Worker(ledger, "w1", lease_seconds=10, heartbeat_every=0.005)

    def beats() -> int:
        return sum(e.kind is EventKind.HEARTBEAT for e in ledger.events("long"))

    def long_task(lease: Any) -> WorkResult:
        for _ in range(3):  # 24 s of work on a 10 s lease: only heartbeats keep it
            seen = beats()
            clock.advance(8)
            deadline = time.monotonic() + 10
            while beats() == seen and time.monotonic() < deadline:
                time.sleep(0.002)
            assert beats() > seen, "no heartbeat"
            assert ledger.claim("w2", lease_seconds=10) is None
        return WorkResult("ok")

    receipt = worker.run_one(long_task)
    assert receipt is not None and receipt.worker == "w1" and receipt.attempt == 1


def test_threads_with_their_own_connections_complete_each_task_once(
    factory: LedgerFactory,
) -> None:
    setup = factory(clock=time.time)
    tasks = setup.create_many([{"n": i} for i in range(120)])
    errors: list[BaseException] = []
    all_holding = threading.Barrier(4, timeout=30)  # four leases held at once, for sure
    held: list[str] = []

    def work(name: str) -> None:
        first = True

        def handle(lease: Any) -> WorkResult:
            nonlocal first
            if first:
                first = False
                held.append(lease.task_id)
                all_holding.wait()
            return WorkResult(str(lease.payload["n"]))

        try:
            own = factory(clock=time.time)
            Worker(own, name, lease_seconds=30).run(handle, until_idle=True, idle_sleep=0.01)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(held)) == 4  # the concurrent holders had distinct tasks
    receipts = setup.receipts()
    assert sorted(r.task_id for r in receipts) == sorted(tasks)
    completed = [e.task_id for e in setup.events() if e.kind is EventKind.COMPLETED]
    assert len(completed) == len(set(completed)) == 120
    assert {r.worker for r in receipts} == {"t0", "t1", "t2", "t3"}
