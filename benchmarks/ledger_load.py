"""Load and fault test of the task ledger: N worker processes, M tasks, random SIGKILLs.

Worker processes claim tasks with expiring leases and complete them with receipts, while this
script kills a random worker (SIGKILL: no cleanup, possibly mid-transaction) every so often and
starts a replacement. At the end it checks the ledger's two promises and prints the figures:

- tasks lost: tasks without a `completed` receipt (goal 0);
- tasks completed twice: tasks with more than one `completed` event in the log (goal 0);
- tasks/second: tasks / wall time from the first worker start to the last receipt.

Examples:

    python benchmarks/ledger_load.py --backend sqlite --workers 8 --tasks 10000
    python benchmarks/ledger_load.py --backend postgres --dsn postgresql://user@127.0.0.1/db
    python benchmarks/ledger_load.py --backend both  # DSN from $ATTENTION_SCOPING_TEST_PG_DSN

Not a test: it takes tens of seconds and its figures depend on the machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shlex
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_scoping.ledger import (  # noqa: E402
    EventKind,
    PostgresLedger,
    SqliteLedger,
    TaskLedger,
    TaskStatus,
    Worker,
    WorkResult,
)

PG_ENV = "ATTENTION_SCOPING_TEST_PG_DSN"
_FORK = multiprocessing.get_context("fork")


def open_ledger(where: dict[str, Any]) -> TaskLedger:
    """A ledger on the backend described by `where` (one per process)."""
    if where["backend"] == "sqlite":
        return SqliteLedger(where["path"], max_attempts=None)
    return PostgresLedger(where["dsn"], schema=where["schema"], max_attempts=None)


# -- the worker process ---------------------------------------------------------------------


def worker_main(where: dict[str, Any], name: str, lease: float, work_ms: float) -> None:
    """Claim and complete tasks until none is open; simulated work of `work_ms` each."""
    ledger = open_ledger(where)

    def handle(claimed: Any) -> WorkResult:
        if work_ms:
            time.sleep(work_ms / 1000)
        n = claimed.payload["n"]
        return WorkResult(f"result of task {n}", affected_ids=[f"item/{n}"])

    Worker(ledger, name, lease_seconds=lease).run(handle, until_idle=True, idle_sleep=0.02)
    ledger.close()


# -- the parent: load, chaos, verification --------------------------------------------------


@dataclass
class Figures:
    """What one run measured."""

    backend: str
    workers: int
    tasks: int
    seconds: float
    steady_seconds: float
    kills: int
    lost: int
    dead_lettered: int
    completed_twice: int
    releases: int
    command: str

    @property
    def rate(self) -> float:
        return self.tasks / self.seconds

    @property
    def steady_rate(self) -> float:
        return self.tasks / self.steady_seconds if self.steady_seconds else 0.0


def spawn(where: dict[str, Any], name: str, args: argparse.Namespace) -> BaseProcess:
    """Start one worker process (forked: no interpreter start-up in the measured time)."""
    proc = _FORK.Process(
        target=worker_main, args=(where, name, args.lease, args.work_ms), name=name, daemon=True
    )
    proc.start()
    return proc


def run_backend(backend: str, args: argparse.Namespace, command: str) -> Figures:
    """Load one backend with tasks, run the workers under fire, and verify the ledger."""
    rng = random.Random(args.seed)
    tmp = tempfile.TemporaryDirectory()
    if backend == "sqlite":
        where: dict[str, Any] = {"backend": "sqlite", "path": str(Path(tmp.name) / "load.db")}
    else:
        dsn = args.dsn or os.environ.get(PG_ENV)
        if not dsn:
            sys.exit(f"--backend postgres needs --dsn or ${PG_ENV}")
        where = {"backend": "postgres", "dsn": dsn, "schema": f"load_{uuid.uuid4().hex[:12]}"}
    ledger = open_ledger(where)
    for start in range(0, args.tasks, 1000):
        ledger.create_many([{"n": n} for n in range(start, min(args.tasks, start + 1000))])
    print(f"[{backend}] {args.tasks} tasks created; starting {args.workers} workers", flush=True)

    started = time.monotonic()
    procs: dict[str, BaseProcess] = {
        f"w{i}": spawn(where, f"w{i}", args) for i in range(args.workers)
    }
    spawned = args.workers
    kills = 0
    next_kill = started + rng.expovariate(1 / args.kill_every)
    first_receipt: float | None = None
    deadline = started + args.timeout
    try:
        while True:
            now = time.monotonic()
            counts = ledger.counts()
            finished = counts[TaskStatus.COMPLETED] + counts[TaskStatus.FAILED]
            if first_receipt is None and finished:
                first_receipt = now
            if finished == args.tasks:
                break
            if now > deadline:
                sys.exit(f"[{backend}] timed out with {args.tasks - finished} tasks open")
            if now >= next_kill and kills < args.max_kills:
                name = rng.choice(sorted(procs))
                os.kill(procs[name].pid or 0, signal.SIGKILL)
                procs[name].join()
                del procs[name]
                kills += 1
                spawned += 1
                procs[f"w{spawned}"] = spawn(where, f"w{spawned}", args)
                next_kill = now + rng.expovariate(1 / args.kill_every)
            for name, proc in list(procs.items()):  # a worker that ran out of work exits 0
                if proc.exitcode not in (None, 0):
                    sys.exit(f"[{backend}] worker {name} failed with exit code {proc.exitcode}")
            time.sleep(0.05)
        done = time.monotonic()
    finally:
        for proc in procs.values():
            if proc.is_alive():
                proc.kill()
            proc.join()

    receipts = ledger.receipts()
    completed = {r.task_id for r in receipts if r.status is TaskStatus.COMPLETED}
    per_task = Counter(e.task_id for e in ledger.events() if e.kind is EventKind.COMPLETED)
    leased = Counter(e.task_id for e in ledger.events() if e.kind is EventKind.LEASED)
    figures = Figures(
        backend=backend,
        workers=args.workers,
        tasks=args.tasks,
        seconds=done - started,
        steady_seconds=done - (first_receipt or started),
        kills=kills,
        lost=args.tasks - len(completed),
        dead_lettered=sum(r.status is TaskStatus.FAILED for r in receipts),
        completed_twice=sum(1 for n in per_task.values() if n > 1),
        releases=sum(1 for n in leased.values() if n > 1),
        command=command,
    )
    ledger.close()
    if backend == "postgres":
        import psycopg

        with psycopg.connect(where["dsn"], autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{where["schema"]}" CASCADE')
    tmp.cleanup()
    return figures


def report(results: list[Figures]) -> None:
    """The figures as a markdown table, then the command that produced them."""
    print()
    print(
        "| backend | workers | tasks | kills | tasks/s (wall) | tasks/s (from 1st receipt) "
        "| lost | completed twice | re-leased after a kill |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for f in results:
        print(
            f"| {f.backend} | {f.workers} | {f.tasks:,} | {f.kills} | {f.rate:,.0f} "
            f"| {f.steady_rate:,.0f} | {f.lost} | {f.completed_twice} | {f.releases} |"
        )
    print()
    print(f"command: {results[0].command}")
    for f in results:
        if f.dead_lettered:
            print(f"[{f.backend}] {f.dead_lettered} task(s) failed with a receipt (not lost)")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen backends; exit 1 if a task was lost or doubled."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--workers", type=int, default=8, help="worker processes (default 8)")
    parser.add_argument("--tasks", type=int, default=10_000, help="tasks (default 10,000)")
    parser.add_argument("--lease", type=float, default=2.0, help="lease seconds (default 2)")
    parser.add_argument(
        "--kill-every", type=float, default=0.5, help="mean seconds between kills (default 0.5)"
    )
    parser.add_argument("--max-kills", type=int, default=1_000_000, help="stop killing after")
    parser.add_argument("--work-ms", type=float, default=0.0, help="simulated work per task")
    parser.add_argument("--dsn", help=f"PostgreSQL DSN (default ${PG_ENV})")
    parser.add_argument("--seed", type=int, default=7, help="seed of the kill schedule")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up after (s)")
    args = parser.parse_args(argv)
    command = "python benchmarks/ledger_load.py " + shlex.join(argv)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = [run_backend(b, args, command) for b in backends]
    report(results)
    return 0 if all(f.lost == 0 and f.completed_twice == 0 for f in results) else 1


if __name__ == "__main__":
    sys.exit(main())
