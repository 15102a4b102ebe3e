"""The ledger's logic once, in SQL both backends run; backends supply transactions and DDL.

Each operation is one transaction that first locks the task row it changes (`BEGIN IMMEDIATE`
on SQLite, `SELECT ... FOR UPDATE [SKIP LOCKED]` on PostgreSQL), checks the lease, then updates
the task and appends to the event log. The check and the change can therefore never interleave
with another worker's: a task is leased by one worker at a time and completed once.

Every operation is retried on a fresh connection when the database fails transiently (a
restart, a full disk, a lock held too long; see `retry`). A retried write first looks whether
its earlier attempt committed before the connection dropped (ids and lease ids are drawn before
the first attempt), so a retry never creates a task twice, leases two tasks, or refuses its own
completion.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from attention_scoping.errors import ScopeConfigError
from attention_scoping.ledger.bounds import check_delay, check_lease
from attention_scoping.ledger.interface import (
    AlreadyCompletedError,
    EventKind,
    Lease,
    LeaseLostError,
    LedgerEvent,
    Receipt,
    TaskExistsError,
    TaskInfo,
    TaskLedger,
    TaskStatus,
    UnknownTaskError,
)
from attention_scoping.ledger.interface import content_sha256 as hash_output
from attention_scoping.storage.database import Database, Tx
from attention_scoping.storage.retry import RetryPolicy

__all__ = ["Database", "SqlLedger", "Tx"]

T = TypeVar("T")

DEFAULT_MAX_ATTEMPTS = 10
"""Leases a task gets before it is failed as poison (a task that kills every worker)."""

_OPEN = (TaskStatus.PENDING.value, TaskStatus.LEASED.value)
_TERMINAL = (TaskStatus.COMPLETED, TaskStatus.FAILED)
_TASK_COLS = (
    "task_id, kind, payload, status, attempts, max_attempts, worker, ready_at, created_at, "
    "updated_at, lease_id"
)
_RECEIPT_COLS = (
    "task_id, status, content_sha256, affected_ids, worker, lease_id, attempt, completed_at, "
    "seq, error"
)


def _receipt(row: Sequence[Any]) -> Receipt:
    task_id, status, sha, affected, worker, lease_id, attempt, at, seq, error = row
    return Receipt(
        task_id=task_id,
        status=TaskStatus(status),
        content_sha256=sha,
        affected_ids=tuple(json.loads(affected)),
        worker=worker,
        lease_id=lease_id,
        attempt=int(attempt),
        completed_at=float(at),
        seq=int(seq),
        error=error,
    )


def _info(row: Sequence[Any]) -> TaskInfo:
    task_id, kind, payload, status, attempts, max_attempts, worker, ready, created, updated = row[
        :10
    ]
    return TaskInfo(
        task_id=task_id,
        kind=kind,
        payload=json.loads(payload),
        status=TaskStatus(status),
        attempts=int(attempts),
        max_attempts=max_attempts,
        worker=worker,
        ready_at=ready,
        created_at=float(created),
        updated_at=float(updated),
    )


def _held_by(lease: Lease) -> dict[str, Any]:
    """The `worker`, `lease_id` and `attempt` of an event or outcome by the holder of `lease`."""
    return {"worker": lease.worker, "lease_id": lease.lease_id, "attempt": lease.attempt}


class SqlLedger(TaskLedger):
    """`TaskLedger` over any SQL backend: a subclass opens `self.db` and creates the schema."""

    db: Database
    """The connection every operation runs through."""

    lock_clause: str = ""
    """Appended to the claim query (`FOR UPDATE SKIP LOCKED` where the backend has it)."""
    row_lock: str = ""
    """Appended to single-row reads inside a write (`FOR UPDATE` where needed)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        max_attempts: int | None = DEFAULT_MAX_ATTEMPTS,
        prefix: str = "",
        retry: RetryPolicy | None = None,
    ) -> None:
        """Keep the clock, the attempt limit, the table-name prefix and the retry policy."""
        if max_attempts is not None and max_attempts < 1:
            msg = f"max_attempts must be at least 1 (or None), not {max_attempts}"
            raise ScopeConfigError(msg)
        self.clock = clock
        self.max_attempts = max_attempts
        self.retry = retry if retry is not None else RetryPolicy()
        self.tasks_table = f"{prefix}ledger_tasks"
        self.events_table = f"{prefix}ledger_events"
        self.receipts_table = f"{prefix}ledger_receipts"

    def _transaction(self) -> AbstractContextManager[Tx]:
        """A write transaction (committed on exit, rolled back on error)."""
        return self.db.write_tx()

    def _read(self) -> AbstractContextManager[Tx]:
        """A read-only snapshot."""
        return self.db.read_tx()

    def _reset(self) -> None:
        """Drop the connection after a transient error (the next transaction reconnects)."""
        self.db.reset()

    def close(self) -> None:
        """Close the connection (for good)."""
        self.db.close()

    def _do(self, what: str, op: Callable[[bool], T]) -> T:
        """Run `op(again)` under the retry policy (see `RetryPolicy.run`)."""
        return self.retry.run(op, what=f"ledger {what}", reset=self._reset)

    def _reads(self, what: str, op: Callable[[Tx], T]) -> T:
        """One read-only snapshot, retried on transient errors."""

        def attempt(_again: bool) -> T:
            with self._read() as tx:
                return op(tx)

        return self._do(what, attempt)

    # -- helpers ----------------------------------------------------------------------------

    def _event(
        self,
        tx: Tx,
        task_id: str,
        kind: EventKind,
        at: float,
        *,
        worker: str | None = None,
        lease_id: str | None = None,
        attempt: int | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> int:
        rows = tx.rows(
            f"INSERT INTO {self.events_table} (task_id, kind, at, worker, lease_id, attempt, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (task_id, kind.value, at, worker, lease_id, attempt, json.dumps(dict(data or {}))),
        )
        return int(rows[0][0])

    def _insert_task(
        self,
        tx: Tx,
        payload: Mapping[str, Any],
        tid: str,
        kind: str,
        max_attempts: int | None,
        now: float,
        delay: float,
    ) -> str:
        if not isinstance(tid, str) or not tid or len(tid) > 200:
            msg = f"task_id must be a non-empty string of at most 200 characters, not {tid!r}"
            raise ScopeConfigError(msg)
        body = json.dumps(dict(payload), sort_keys=True)
        limit = max_attempts if max_attempts is not None else self.max_attempts
        seq = self._event(tx, tid, EventKind.CREATED, now, data={"kind": kind})
        changed = tx.run(
            f"INSERT INTO {self.tasks_table} (task_id, kind, payload, status, attempts, "
            "max_attempts, ready_at, created_seq, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO NOTHING",
            (tid, kind, body, TaskStatus.PENDING.value, limit, now + delay, seq, now, now),
        )
        if changed != 1:
            msg = f"a task with id {tid!r} already exists"
            raise TaskExistsError(msg)
        return tid

    def _locked(self, tx: Tx, task_id: str) -> tuple[Any, ...]:
        rows = tx.rows(
            f"SELECT {_TASK_COLS} FROM {self.tasks_table} WHERE task_id = ?{self.row_lock}",
            (task_id,),
        )
        if not rows:
            msg = f"no task {task_id!r}"
            raise UnknownTaskError(msg)
        return rows[0]

    def _held(self, tx: Tx, lease: Lease, now: float) -> tuple[Any, ...]:
        """The task row, locked, if `lease` is still its lease; otherwise the precise refusal."""
        row = self._locked(tx, lease.task_id)
        status, lease_id, worker = TaskStatus(row[3]), row[10], row[6]
        if status in _TERMINAL:
            receipts = tx.rows(
                f"SELECT worker, lease_id FROM {self.receipts_table} WHERE task_id = ?",
                (lease.task_id,),
            )
            by = receipts[0] if receipts else (worker, lease_id)
            whose = "this lease" if by[1] == lease.lease_id else f"worker {by[0]!r}"
            msg = f"task {lease.task_id!r} is already {status.value} (by {whose})"
            raise AlreadyCompletedError(msg)
        if status is TaskStatus.LEASED and lease_id == lease.lease_id:
            return row
        if status is TaskStatus.LEASED:
            msg = (
                f"lease {lease.lease_id} on task {lease.task_id!r} was lost: it expired and "
                f"worker {worker!r} holds the task now (attempt {row[4]})"
            )
        else:
            msg = (
                f"lease {lease.lease_id} on task {lease.task_id!r} was lost: it expired and the "
                "task went back to the pool"
            )
        raise LeaseLostError(msg)

    def _finish(
        self,
        tx: Tx,
        task_id: str,
        status: TaskStatus,
        now: float,
        *,
        worker: str,
        lease_id: str,
        attempt: int,
        sha: str | None,
        affected: Sequence[str],
        error: str | None,
    ) -> Receipt:
        kind = EventKind.COMPLETED if status is TaskStatus.COMPLETED else EventKind.FAILED
        data: dict[str, Any] = {"content_sha256": sha, "affected_ids": list(affected)}
        if error is not None:
            data["error"] = error
        seq = self._event(
            tx, task_id, kind, now, worker=worker, lease_id=lease_id, attempt=attempt, data=data
        )
        tx.run(
            f"UPDATE {self.tasks_table} SET status = ?, ready_at = NULL, updated_at = ? "
            "WHERE task_id = ?",
            (status.value, now, task_id),
        )
        tx.run(
            f"INSERT INTO {self.receipts_table} ({_RECEIPT_COLS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                task_id,
                status.value,
                sha,
                json.dumps(list(affected)),
                worker,
                lease_id,
                attempt,
                now,
                seq,
                error,
            ),
        )
        return Receipt(
            task_id, status, sha, tuple(affected), worker, lease_id, attempt, now, seq, error
        )

    def _finish_lease(
        self,
        tx: Tx,
        lease: Lease,
        status: TaskStatus,
        now: float,
        *,
        sha: str | None = None,
        affected: Sequence[str] = (),
        error: str | None = None,
    ) -> Receipt:
        """`_finish` by the holder of `lease`."""
        held = {**_held_by(lease), "sha": sha, "affected": affected, "error": error}
        return self._finish(tx, lease.task_id, status, now, **held)

    def _expire(self, tx: Tx, row: Sequence[Any], now: float) -> bool:
        """Log the expiry of `row`'s lease; fail the task if out of attempts. True if failed."""
        task_id, attempts, max_attempts, worker, lease_id = row[0], row[4], row[5], row[6], row[10]
        self._event(
            tx, task_id, EventKind.EXPIRED, now, worker=worker, lease_id=lease_id, attempt=attempts
        )
        if max_attempts is not None and attempts >= max_attempts:
            self._finish(
                tx,
                task_id,
                TaskStatus.FAILED,
                now,
                worker=worker,
                lease_id=lease_id,
                attempt=attempts,
                sha=None,
                affected=(),
                error=f"lease expired on attempt {attempts} of {max_attempts}; given up",
            )
            return True
        return False

    # -- what an earlier attempt left (after a connection dropped around its COMMIT) -------

    def _snapshot(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Rows of one read, inside an attempt (the attempt's retry covers it)."""
        with self._read() as tx:
            return tx.rows(sql, params)

    def _committed_task(self, task_id: str, kind: str, payload: Mapping[str, Any]) -> bool:
        """Whether `task_id` exists with exactly this kind and payload."""
        body = json.dumps(dict(payload), sort_keys=True)
        rows = self._snapshot(
            f"SELECT kind, payload FROM {self.tasks_table} WHERE task_id = ?", (task_id,)
        )
        return bool(rows) and rows[0][0] == kind and rows[0][1] == body

    def _own_lease(self, lease_id: str, lease_seconds: float) -> Lease | None:
        """The lease `lease_id` if an earlier attempt of this claim took it."""
        rows = self._snapshot(
            f"SELECT {_TASK_COLS} FROM {self.tasks_table} WHERE lease_id = ? AND status = ?",
            (lease_id, TaskStatus.LEASED.value),
        )
        if not rows:
            return None
        row = rows[0]
        return Lease(
            task_id=row[0],
            lease_id=lease_id,
            worker=row[6],
            attempt=int(row[4]),
            expires_at=float(row[7]),
            lease_seconds=lease_seconds,
            kind=row[1],
            payload=json.loads(row[2]),
        )

    def _own_receipt(self, lease: Lease, status: TaskStatus) -> Receipt | None:
        """The task's receipt if an earlier attempt with `lease` wrote it."""
        rows = self._snapshot(
            f"SELECT {_RECEIPT_COLS} FROM {self.receipts_table} WHERE task_id = ?",
            (lease.task_id,),
        )
        if not rows:
            return None
        receipt = _receipt(rows[0])
        return receipt if (receipt.lease_id, receipt.status) == (lease.lease_id, status) else None

    def _own_retry(self, lease: Lease) -> bool:
        """Whether an earlier attempt returned the task to the pool under `lease`."""
        rows = self._snapshot(
            f"SELECT data FROM {self.events_table} WHERE task_id = ? AND lease_id = ? AND kind = ?",
            (lease.task_id, lease.lease_id, EventKind.FAILED.value),
        )
        return any(json.loads(data).get("retry") for (data,) in rows)

    # -- writes -----------------------------------------------------------------------------

    def create(
        self,
        payload: Mapping[str, Any],
        *,
        task_id: str | None = None,
        kind: str = "task",
        max_attempts: int | None = None,
        delay: float = 0.0,
    ) -> str:
        """Add a pending task and return its id."""
        delay = check_delay(delay)
        tid = uuid.uuid4().hex if task_id is None else task_id

        def attempt(again: bool) -> str:
            if again and self._committed_task(tid, kind, payload):
                return tid
            with self._transaction() as tx:
                return self._insert_task(tx, payload, tid, kind, max_attempts, self.clock(), delay)

        return self._do("create", attempt)

    def create_many(
        self, payloads: Iterable[Mapping[str, Any]], *, kind: str = "task"
    ) -> list[str]:
        """Add many pending tasks in one transaction."""
        items = [(uuid.uuid4().hex, p) for p in payloads]

        def attempt(again: bool) -> list[str]:
            if again and items and self._committed_task(items[0][0], kind, items[0][1]):
                return [tid for tid, _ in items]  # one transaction: all of them committed
            with self._transaction() as tx:
                now = self.clock()
                return [self._insert_task(tx, p, tid, kind, None, now, 0.0) for tid, p in items]

        return self._do("create_many", attempt)

    def _claim(
        self, tx: Tx, worker: str, lease_seconds: float, kinds: list[str] | None, lease_id: str
    ) -> Lease | None:
        where = f"status IN ('{_OPEN[0]}', '{_OPEN[1]}') AND ready_at <= ?"
        if kinds:
            where += f" AND kind IN ({', '.join('?' * len(kinds))})"
        sql = (
            f"SELECT {_TASK_COLS} FROM {self.tasks_table} WHERE {where} "
            f"ORDER BY ready_at, created_seq LIMIT 1{self.lock_clause}"
        )
        now = self.clock()
        while True:
            rows = tx.rows(sql, (now, *(kinds or ())))
            if not rows:
                return None
            row = rows[0]
            if row[3] == TaskStatus.LEASED.value and self._expire(tx, row, now):
                continue
            attempt = int(row[4]) + 1
            expires = now + lease_seconds
            tx.run(
                f"UPDATE {self.tasks_table} SET status = ?, attempts = ?, lease_id = ?, "
                "worker = ?, ready_at = ?, updated_at = ? WHERE task_id = ?",
                (TaskStatus.LEASED.value, attempt, lease_id, worker, expires, now, row[0]),
            )
            self._event(
                tx,
                row[0],
                EventKind.LEASED,
                now,
                worker=worker,
                lease_id=lease_id,
                attempt=attempt,
                data={"expires_at": expires},
            )
            return Lease(
                task_id=row[0],
                lease_id=lease_id,
                worker=worker,
                attempt=attempt,
                expires_at=expires,
                lease_seconds=lease_seconds,
                kind=row[1],
                payload=json.loads(row[2]),
            )

    def claim(
        self, worker: str, *, lease_seconds: float = 30.0, kinds: Sequence[str] | None = None
    ) -> Lease | None:
        """Lease the oldest claimable task, or None."""
        lease_seconds = check_lease(lease_seconds)
        wanted = list(kinds) if kinds is not None else None
        lease_id = uuid.uuid4().hex

        def attempt(again: bool) -> Lease | None:
            if again and (found := self._own_lease(lease_id, lease_seconds)) is not None:
                return found
            with self._transaction() as tx:
                return self._claim(tx, worker, lease_seconds, wanted, lease_id)

        return self._do("claim", attempt)

    def heartbeat(self, lease: Lease, *, lease_seconds: float | None = None) -> Lease:
        """Extend `lease` (a retry after a dropped COMMIT just extends it once more)."""
        seconds = check_lease(lease.lease_seconds if lease_seconds is None else lease_seconds)

        def attempt(_again: bool) -> float:
            with self._transaction() as tx:
                now = self.clock()
                self._held(tx, lease, now)
                expires = now + seconds
                tx.run(
                    f"UPDATE {self.tasks_table} SET ready_at = ?, updated_at = ? WHERE task_id = ?",
                    (expires, now, lease.task_id),
                )
                held = {**_held_by(lease), "data": {"expires_at": expires}}
                self._event(tx, lease.task_id, EventKind.HEARTBEAT, now, **held)
                return expires

        expires = self._do("heartbeat", attempt)
        return dataclasses.replace(lease, expires_at=expires, lease_seconds=seconds)

    def complete(
        self,
        lease: Lease,
        output: str | bytes | None = None,
        *,
        content_sha256: str | None = None,
        affected_ids: Iterable[str] = (),
    ) -> Receipt:
        """Finish the task with a `completed` receipt."""
        if output is not None and content_sha256 is not None:
            msg = "pass output or content_sha256, not both"
            raise ScopeConfigError(msg)
        sha = content_sha256 if output is None else hash_output(output)
        affected = [str(i) for i in affected_ids]

        def attempt(again: bool) -> Receipt:
            if again and (mine := self._own_receipt(lease, TaskStatus.COMPLETED)) is not None:
                return mine
            with self._transaction() as tx:
                now = self.clock()
                self._held(tx, lease, now)
                return self._finish_lease(
                    tx, lease, TaskStatus.COMPLETED, now, sha=sha, affected=affected
                )

        return self._do("complete", attempt)

    def _fail(
        self, tx: Tx, lease: Lease, error: str, retry: bool, retry_after: float
    ) -> Receipt | None:
        now = self.clock()
        row = self._held(tx, lease, now)
        max_attempts = row[5]
        if retry and (max_attempts is None or lease.attempt < max_attempts):
            held = {**_held_by(lease), "data": {"error": error, "retry": True}}
            self._event(tx, lease.task_id, EventKind.FAILED, now, **held)
            tx.run(
                f"UPDATE {self.tasks_table} SET status = ?, ready_at = ?, lease_id = NULL, "
                "worker = NULL, updated_at = ? WHERE task_id = ?",
                (TaskStatus.PENDING.value, now + retry_after, now, lease.task_id),
            )
            return None
        return self._finish_lease(tx, lease, TaskStatus.FAILED, now, error=error)

    def fail(
        self, lease: Lease, error: str, *, retry: bool = False, retry_after: float = 0.0
    ) -> Receipt | None:
        """Give up on the task, for now (`retry`) or for good."""
        retry_after = check_delay(retry_after, "retry_after")

        def attempt(again: bool) -> Receipt | None:
            if again:
                if (mine := self._own_receipt(lease, TaskStatus.FAILED)) is not None:
                    return mine
                if self._own_retry(lease):
                    return None
            with self._transaction() as tx:
                return self._fail(tx, lease, error, retry, retry_after)

        return self._do("fail", attempt)

    def expire_leases(self) -> int:
        """Return every task with an expired lease to the pool now."""

        def attempt(_again: bool) -> int:
            with self._transaction() as tx:
                now = self.clock()
                rows = tx.rows(
                    f"SELECT {_TASK_COLS} FROM {self.tasks_table} "
                    f"WHERE status = ? AND ready_at <= ? ORDER BY ready_at{self.lock_clause}",
                    (TaskStatus.LEASED.value, now),
                )
                for row in rows:
                    if not self._expire(tx, row, now):
                        tx.run(
                            f"UPDATE {self.tasks_table} SET status = ?, ready_at = ?, "
                            "lease_id = NULL, worker = NULL, updated_at = ? WHERE task_id = ?",
                            (TaskStatus.PENDING.value, now, now, row[0]),
                        )
                return len(rows)

        return self._do("expire_leases", attempt)

    # -- reads ------------------------------------------------------------------------------

    def receipt(self, task_id: str) -> Receipt | None:
        """The task's receipt, or None while it is not finished."""

        def read(tx: Tx) -> Receipt | None:
            rows = tx.rows(
                f"SELECT {_RECEIPT_COLS} FROM {self.receipts_table} WHERE task_id = ?", (task_id,)
            )
            if rows:
                return _receipt(rows[0])
            if not tx.rows(f"SELECT 1 FROM {self.tasks_table} WHERE task_id = ?", (task_id,)):
                msg = f"no task {task_id!r}"
                raise UnknownTaskError(msg)
            return None

        return self._reads("receipt", read)

    def receipts(
        self,
        *,
        task_ids: Sequence[str] | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[Receipt]:
        """Receipts in completion order."""
        sql = f"SELECT {_RECEIPT_COLS} FROM {self.receipts_table} WHERE seq > ?"
        params: list[Any] = [after_seq]
        if task_ids is not None:
            if not task_ids:
                return []
            sql += f" AND task_id IN ({', '.join('?' * len(task_ids))})"
            params += list(task_ids)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return self._reads("receipts", lambda tx: [_receipt(r) for r in tx.rows(sql, params)])

    def task(self, task_id: str) -> TaskInfo:
        """A task's current state."""
        rows = self._reads(
            "task",
            lambda tx: tx.rows(
                f"SELECT {_TASK_COLS} FROM {self.tasks_table} WHERE task_id = ?", (task_id,)
            ),
        )
        if not rows:
            msg = f"no task {task_id!r}"
            raise UnknownTaskError(msg)
        return _info(rows[0])

    def counts(self) -> dict[TaskStatus, int]:
        """Number of tasks per status."""
        rows = self._reads(
            "counts",
            lambda tx: tx.rows(f"SELECT status, COUNT(*) FROM {self.tasks_table} GROUP BY status"),
        )
        out = dict.fromkeys(TaskStatus, 0)
        out.update({TaskStatus(s): int(n) for s, n in rows})
        return out

    def events(
        self, task_id: str | None = None, *, after_seq: int = 0, limit: int | None = None
    ) -> list[LedgerEvent]:
        """The append-only log in order."""
        sql = (
            f"SELECT seq, task_id, kind, at, worker, lease_id, attempt, data "
            f"FROM {self.events_table} WHERE seq > ?"
        )
        params: list[Any] = [after_seq]
        if task_id is not None:
            sql += " AND task_id = ?"
            params.append(task_id)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        rows = self._reads("events", lambda tx: tx.rows(sql, params))
        return [
            LedgerEvent(int(s), t, EventKind(k), float(at), w, lid, a, json.loads(d))
            for s, t, k, at, w, lid, a, d in rows
        ]
