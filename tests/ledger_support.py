"""Backends for the shared ledger test suite: SQLite in a temp file, PostgreSQL in a fresh schema.

The PostgreSQL backend needs a server: `.ci/run` starts one on 127.0.0.1 and exports
`ATTENTION_SCOPING_TEST_PG_DSN`. Without it those tests are skipped with that reason (shown by
`pytest -ra`); with it set but unreachable they fail, because CI must test both backends.
`.ci/run` also exports `ATTENTION_SCOPING_TEST_PG_CTL`, the `pg_ctl -D ...` command of that
throwaway cluster, for the tests that restart or stop the server under running workers.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from attention_scoping.ledger import Lease, PostgresLedger, SqliteLedger
from attention_scoping.ledger.sql import SqlLedger
from tests.safety_support import FakeClock

PG_ENV = "ATTENTION_SCOPING_TEST_PG_DSN"
PG_CTL_ENV = "ATTENTION_SCOPING_TEST_PG_CTL"
BACKENDS = ("sqlite", "postgres")


def pg_dsn_or_skip() -> str:
    """The test server's DSN, or a visible skip saying how to get one."""
    dsn = os.environ.get(PG_ENV)
    if not dsn:
        pytest.skip(
            f"PostgreSQL backend not tested: {PG_ENV} is not set (.ci/run installs and "
            "starts a server on 127.0.0.1 and sets it)"
        )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip('PostgreSQL backend not tested: psycopg missing (pip install -e ".[dev]")')
    return dsn


def pg_ctl_or_skip() -> list[str]:
    """The `pg_ctl -D <dir> -l <log>` command of the test server (as argv), or a visible skip."""
    pg_dsn_or_skip()
    command = os.environ.get(PG_CTL_ENV, "")
    if not command.strip():
        pytest.skip(
            f"PostgreSQL restart not tested: {PG_CTL_ENV} is not set (.ci/run sets it to the "
            "pg_ctl command of its throwaway server)"
        )
    return shlex.split(command)


def pg_ctl(argv: list[str], *args: str) -> None:
    """Run `pg_ctl <args>` on the test server (waiting for it), failing the test on error."""
    done = subprocess.run(
        [*argv, *args, "-w", "-t", "60"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"pg_ctl {' '.join(args)} failed: {done.stderr.strip()}"


def drop_schema(dsn: str, schema: str) -> None:
    """Remove a test schema and everything in it."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@contextmanager
def backend_location(kind: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Where a ledger of `kind` lives: `{"path": ...}` or `{"dsn": ..., "schema": ...}`."""
    if kind == "sqlite":
        yield {"path": str(tmp_path / "ledger.db")}
        return
    dsn = pg_dsn_or_skip()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    try:
        yield {"dsn": dsn, "schema": schema}
    finally:
        drop_schema(dsn, schema)


def open_ledger(kind: str, where: dict[str, Any], **kwargs: Any) -> SqlLedger:
    """A new ledger object (a new connection) on the backend at `where`."""
    if kind == "sqlite":
        return SqliteLedger(where["path"], **kwargs)
    return PostgresLedger(where["dsn"], schema=where["schema"], **kwargs)


def raw_execute(ledger: SqlLedger, sql: str) -> None:
    """Run SQL on the ledger's own connection, bypassing its API (to probe the guarantees)."""
    if isinstance(ledger, SqliteLedger):
        ledger.db._live().execute(sql)
    else:
        with ledger.db._live().cursor() as cur:  # type: ignore[attr-defined]
            cur.execute(sql)


LedgerFactory = Callable[..., SqlLedger]


# -- fixtures of the ledger suites ---------------------------------------------------------


def ledger_fixtures() -> tuple[Any, Any, Any, Any]:
    """The fixtures `kind` (each backend in turn), `clock`, `factory` (opens ledgers on one
    fresh backend, on the test's clock, and closes them) and `ledger`, for a test module to
    bind by name: `kind, clock, factory, ledger = ledger_fixtures()`."""

    @pytest.fixture(params=BACKENDS)
    def kind(request: pytest.FixtureRequest) -> str:
        return str(request.param)

    @pytest.fixture
    def clock() -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def factory(kind: str, tmp_path: Path, clock: FakeClock) -> Iterator[LedgerFactory]:
        opened: list[SqlLedger] = []
        with backend_location(kind, tmp_path) as where:

            def make(**kwargs: Any) -> SqlLedger:
                kwargs.setdefault("clock", clock)
                ledger = open_ledger(kind, where, **kwargs)
                opened.append(ledger)
                return ledger

            yield make
            for ledger in opened:
                ledger.close()

    @pytest.fixture
    def ledger(factory: LedgerFactory) -> SqlLedger:
        return factory()

    return kind, clock, factory, ledger


def _result(lease: Any) -> Any:
    from attention_scoping.ledger import WorkResult

    n = lease.payload["n"]
    return WorkResult(f"result {n}", [f"item/{n}"])


def process_worker(kind: str, where: dict[str, Any], name: str) -> None:
    """A worker process: complete tasks until none is claimable (run in a child process)."""
    from attention_scoping.ledger import Worker

    ledger = open_ledger(kind, where)
    worker = Worker(ledger, name, lease_seconds=3600, kinds=["task"])
    while worker.run_one(_result) is not None:
        pass
    ledger.close()


def process_victim(kind: str, where: dict[str, Any], claimed: Any) -> None:
    """A worker process that claims one task and hangs until it is killed."""
    import threading

    ledger = open_ledger(kind, where)
    lease = ledger.claim("victim", lease_seconds=3600, kinds=["victim"])
    claimed.put(lease.task_id if lease else None)
    threading.Event().wait()


def claimed(ledger: SqlLedger, worker: str, **kwargs: Any) -> Lease:
    """Claim a task for `worker` where the test expects one to be free (fails if none is)."""
    lease = ledger.claim(worker, **kwargs)
    assert lease is not None, f"no task was free for {worker!r}"
    return lease
