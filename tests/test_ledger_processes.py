"""Several processes on one ledger, one of them killed (SIGKILL) while it holds a lease."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from attention_scoping.ledger import EventKind, TaskStatus, Worker
from tests.ledger_support import (
    BACKENDS,
    _result,
    backend_location,
    open_ledger,
    process_victim,
    process_worker,
)
from tests.safety_support import FakeClock


@pytest.mark.parametrize("kind", BACKENDS)
def test_killed_worker_loses_nothing_and_no_task_completes_twice(kind: str, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with backend_location(kind, tmp_path) as where:
        ledger = open_ledger(kind, where)
        lost_task = ledger.create({"n": -1}, kind="victim")
        tasks = [lost_task, *ledger.create_many([{"n": i} for i in range(80)])]

        claimed = ctx.Queue()
        victim = ctx.Process(target=process_victim, args=(kind, where, claimed))
        workers = [
            ctx.Process(target=process_worker, args=(kind, where, f"p{i}")) for i in range(2)
        ]
        for p in [victim, *workers]:
            p.start()
        assert claimed.get(timeout=60) == lost_task
        victim.kill()  # SIGKILL while holding the lease: no cleanup runs
        victim.join(timeout=30)
        assert victim.exitcode == -9
        for p in workers:
            p.join(timeout=120)
            assert p.exitcode == 0

        assert ledger.task(lost_task).status is TaskStatus.LEASED  # the dead lease is still out
        later = FakeClock(ledger.task(lost_task).ready_at or 0)  # the moment it expires
        rescuer = open_ledger(kind, where, clock=later)
        receipt = Worker(rescuer, "rescuer").run_one(_result)
        assert receipt is not None and receipt.task_id == lost_task and receipt.attempt == 2

        receipts = ledger.receipts()
        assert sorted(r.task_id for r in receipts) == sorted(tasks)  # none lost
        done = [e.task_id for e in ledger.events() if e.kind is EventKind.COMPLETED]
        assert len(done) == len(set(done)) == len(tasks)  # none completed twice
        assert {r.worker for r in receipts} <= {"p0", "p1", "rescuer"}
        expired = [e for e in ledger.events(lost_task) if e.kind is EventKind.EXPIRED]
        assert [e.worker for e in expired] == ["victim"]
        rescuer.close()
        ledger.close()
