"""The PostgreSQL ledger under database restarts and outages: do the workers outlive them?

N worker processes claim and complete M tasks while this script restarts the PostgreSQL server
(`pg_ctl restart -m fast`: every connection gets `AdminShutdown`) every few seconds and, once,
stops it for a while. At the end it prints:

- workers that died (exited with an error before the work was done; goal 0);
- tasks lost (no `completed` receipt; goal 0) and completed twice (goal 0);
- tasks/second over the whole run, outages included.

Example (the test server of `.ci/run`, whose environment sets both variables):

    python benchmarks/ledger_db_restart.py --workers 4 --tasks 3000 --restarts 3 --outage 5

Not a test: it takes tens of seconds and restarts the server it is given.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shlex
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_scoping.ledger import (  # noqa: E402
    EventKind,
    PostgresLedger,
    TaskStatus,
    Worker,
    WorkResult,
)

PG_ENV = "ATTENTION_SCOPING_TEST_PG_DSN"
PG_CTL_ENV = "ATTENTION_SCOPING_TEST_PG_CTL"
_FORK = multiprocessing.get_context("fork")


def worker_main(dsn: str, schema: str, name: str, work_ms: float) -> None:
    """Claim and complete tasks until none is open (a transient error never ends the loop)."""
    ledger = PostgresLedger(dsn, schema=schema, max_attempts=None)

    def handle(lease: Any) -> WorkResult:
        time.sleep(work_ms / 1000)
        return WorkResult(f"result of task {lease.payload['n']}")

    Worker(ledger, name, lease_seconds=10).run(handle, until_idle=True, idle_sleep=0.05)
    ledger.close()


def pg_ctl(command: list[str], *args: str) -> None:
    """Run `pg_ctl <args> -w` on the server."""
    subprocess.run(
        [*command, *args, "-w", "-t", "60"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        check=True,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the workers under restarts; exit 1 if a worker died or a task was lost or doubled."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--restarts", type=int, default=3, help="fast restarts of the server")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between restarts")
    parser.add_argument("--outage", type=float, default=5.0, help="seconds stopped, once")
    parser.add_argument("--work-ms", type=float, default=2.0, help="simulated work per task")
    parser.add_argument("--dsn", default=os.environ.get(PG_ENV), help=f"default ${PG_ENV}")
    parser.add_argument(
        "--pg-ctl", default=os.environ.get(PG_CTL_ENV), help=f"default ${PG_CTL_ENV}"
    )
    args = parser.parse_args(argv)
    if not args.dsn or not args.pg_ctl:
        sys.exit(f"error: needs --dsn and --pg-ctl (or ${PG_ENV} and ${PG_CTL_ENV})")
    control = shlex.split(args.pg_ctl)
    schema = f"restart_{uuid.uuid4().hex[:12]}"
    ledger = PostgresLedger(args.dsn, schema=schema, max_attempts=None)
    for start in range(0, args.tasks, 1000):
        ledger.create_many([{"n": n} for n in range(start, min(args.tasks, start + 1000))])

    started = time.monotonic()
    procs = [
        _FORK.Process(target=worker_main, args=(args.dsn, schema, f"w{i}", args.work_ms))
        for i in range(args.workers)
    ]
    for proc in procs:
        proc.start()
    for _ in range(args.restarts):
        time.sleep(args.every)
        pg_ctl(control, "restart", "-m", "fast")
    time.sleep(args.every)
    pg_ctl(control, "stop", "-m", "fast")
    time.sleep(args.outage)
    pg_ctl(control, "restart")  # starts it again with its last options
    for proc in procs:
        proc.join(timeout=600)
    seconds = time.monotonic() - started

    died = [p.name for p in procs if p.exitcode != 0]
    receipts = ledger.receipts()
    completed = {r.task_id for r in receipts if r.status is TaskStatus.COMPLETED}
    per_task = Counter(e.task_id for e in ledger.events() if e.kind is EventKind.COMPLETED)
    twice = sum(1 for n in per_task.values() if n > 1)
    lost = args.tasks - len(completed)
    ledger.close()
    import psycopg

    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    head = "| workers | tasks | restarts | outage s | workers died | lost | completed twice |"
    print(head + " tasks/s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print(
        f"| {args.workers} | {args.tasks:,} | {args.restarts} | {args.outage:g} | {len(died)} "
        f"| {lost} | {twice} | {args.tasks / seconds:,.0f} |"
    )
    print(f"\ncommand: python benchmarks/ledger_db_restart.py {shlex.join(argv)}")
    return 0 if not died and not lost and not twice else 1


if __name__ == "__main__":
    sys.exit(main())
