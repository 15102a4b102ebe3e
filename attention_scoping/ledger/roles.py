"""The two sides of the ledger: a coordinator that posts tasks and reads receipts only, and a
worker loop that claims, heartbeats while it works, and completes with a receipt."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from attention_scoping.common.failures import exception_line
from attention_scoping.errors import ScopeConfigError
from attention_scoping.ledger.bounds import check_lease
from attention_scoping.ledger.interface import (
    Lease,
    LeaseLostError,
    LedgerError,
    Receipt,
    TaskLedger,
    TaskStatus,
)
from attention_scoping.storage.retry import (
    Backoff,
    DatabaseUnavailableError,
    RetryPolicy,
    is_transient,
)

__all__ = ["Coordinator", "WorkResult", "Worker"]

logger = logging.getLogger(__name__)


class Coordinator:
    """A coordinator's view of the ledger: post tasks, read receipts and progress.

    It has no access to what workers did on the way (their transcripts never enter the
    ledger); a receipt carries the status, the SHA-256 of the output and the affected ids.
    """

    def __init__(self, ledger: TaskLedger) -> None:
        """Wrap `ledger`."""
        self._ledger = ledger

    def post(
        self,
        payload: Mapping[str, object],
        *,
        task_id: str | None = None,
        kind: str = "task",
        max_attempts: int | None = None,
    ) -> str:
        """Add a task; its id."""
        return self._ledger.create(payload, task_id=task_id, kind=kind, max_attempts=max_attempts)

    def receipt(self, task_id: str) -> Receipt | None:
        """The task's receipt, or None while it runs."""
        return self._ledger.receipt(task_id)

    def receipts(
        self, task_ids: Sequence[str] | None = None, *, after_seq: int = 0
    ) -> list[Receipt]:
        """Receipts in completion order."""
        return self._ledger.receipts(task_ids=task_ids, after_seq=after_seq)

    def progress(self) -> dict[str, int]:
        """Tasks per status."""
        return {status.value: n for status, n in self._ledger.counts().items()}

    def wait(
        self,
        task_ids: Sequence[str],
        *,
        timeout: float,
        poll: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> list[Receipt]:
        """Block until every task in `task_ids` has a receipt; them, in `task_ids` order.

        Raises:
            TimeoutError: naming the tasks still without a receipt.
            ValueError: `timeout` is negative or `nan` (`inf` waits without end), or `poll`
                is not finite and > 0.
        """
        if math.isnan(timeout) or timeout < 0:
            msg = f"timeout must be a number of seconds >= 0 (inf: no limit), not {timeout!r}"
            raise ScopeConfigError(msg)
        if not (math.isfinite(poll) and poll > 0):
            msg = f"poll must be a finite number of seconds > 0, not {poll!r}"
            raise ScopeConfigError(msg)
        deadline = clock() + timeout
        while True:
            found = {r.task_id: r for r in self._ledger.receipts(task_ids=task_ids)}
            missing = [t for t in task_ids if t not in found]
            if not missing:
                return [found[t] for t in task_ids]
            if clock() >= deadline:
                msg = f"no receipt after {timeout} s for {len(missing)} task(s): {missing[:5]}"
                raise TimeoutError(msg)
            sleep(poll)


@dataclass(frozen=True)
class WorkResult:
    """What a worker's handler returns: the output (hashed into the receipt) and what changed."""

    output: str | bytes
    affected_ids: Sequence[str] = ()


class _Heartbeat:
    """Extends a lease from a background thread until stopped or the lease is lost."""

    def __init__(self, ledger: TaskLedger, lease: Lease, every: float) -> None:
        self.ledger = ledger
        self.lease = lease
        self.every = every
        self.lost: LedgerError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ledger-heartbeat", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.lease = self.ledger.heartbeat(self.lease)
            except LedgerError as exc:
                self.lost = exc
                return
            except Exception:  # a transient database error: try again next beat
                logger.exception("heartbeat failed for task %s", self.lease.task_id)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Worker:
    """Claims tasks and runs a handler on each, keeping the lease alive while it works.

    Example:
        ```python
        worker = Worker(SqliteLedger("tasks.db"), "worker-1", lease_seconds=60)
        worker.run(lambda lease: WorkResult(do(lease.payload), affected_ids=[...]))
        ```

    Args:
        ledger: The ledger (one object per process).
        name: This worker's name in leases, events and receipts.
        lease_seconds: Lease length (at most a week, `bounds.MAX_LEASE_SECONDS`); the lease is
            renewed every `heartbeat_every` seconds (a third of it by default), so only a dead
            or stuck worker lets it expire.
        kinds: Only claim tasks of these kinds.
        retry_errors: A handler exception returns the task to the pool (until the ledger's
            `max_attempts`) when True, fails it for good when False.
        retry: The pauses of `run` while the database is unavailable (`RetryPolicy()`: from
            25-50 ms growing to 2.5-5 s).
    """

    def __init__(
        self,
        ledger: TaskLedger,
        name: str,
        *,
        lease_seconds: float = 30.0,
        heartbeat_every: float | None = None,
        kinds: Iterable[str] | None = None,
        retry_errors: bool = True,
        retry: RetryPolicy | None = None,
    ) -> None:
        """Keep the configuration.

        Raises:
            ValueError: `lease_seconds` or `heartbeat_every` is not finite, > 0 and at most
                `bounds.MAX_LEASE_SECONDS` (one week).
        """
        self.ledger = ledger
        self.name = name
        self.lease_seconds = check_lease(lease_seconds)
        every = lease_seconds / 3 if heartbeat_every is None else heartbeat_every
        self.heartbeat_every = check_lease(every, "heartbeat_every")
        self.kinds = list(kinds) if kinds is not None else None
        self.retry_errors = retry_errors
        self.retry = retry if retry is not None else RetryPolicy()

    def run_one(self, handle: Callable[[Lease], WorkResult]) -> Receipt | None:
        """Claim one task and process it; its receipt, or None when nothing was claimable or
        the task went back to the pool (a retried error).

        Raises:
            LeaseLostError: the lease was lost while working; the result was not recorded.
        """
        lease = self.ledger.claim(self.name, lease_seconds=self.lease_seconds, kinds=self.kinds)
        if lease is None:
            return None
        with _Heartbeat(self.ledger, lease, self.heartbeat_every) as beat:
            try:
                result = handle(lease)
            except Exception as exc:
                error = exception_line(exc)
                logger.warning("task %s failed: %s", lease.task_id, error)
                failed = True
            else:
                failed = False
        if beat.lost is not None and isinstance(beat.lost, LeaseLostError):
            raise beat.lost
        if failed:
            retry = self.retry_errors
            return self._record(lambda: self.ledger.fail(beat.lease, error, retry=retry))
        return self._record(
            lambda: self.ledger.complete(
                beat.lease, result.output, affected_ids=result.affected_ids
            )
        )

    def _record(self, write: Callable[[], Receipt | None]) -> Receipt | None:
        """Write a finished task's outcome, insisting while the database is away for up to one
        lease length (the work is done; redoing it would be the only alternative). The ledger
        still refuses a lease that expired meanwhile."""
        deadline = time.monotonic() + self.lease_seconds
        backoff = Backoff(self.retry)
        while True:
            try:
                return write()
            except DatabaseUnavailableError as exc:
                if time.monotonic() >= deadline:
                    raise
                pause = backoff.next()
                logger.warning(
                    "%s: outcome not recorded yet (%s); retry in %.2f s", self.name, exc, pause
                )
                time.sleep(pause)

    def _step(self, handle: Callable[[Lease], WorkResult], until_idle: bool) -> str:
        """One turn of the loop: "done" (a receipt), "retry" (go on now), "idle" or "finished"."""
        try:
            receipt = self.run_one(handle)
        except LedgerError as exc:  # a lost lease: the task is someone else's now
            logger.warning("%s: %s", self.name, exc)
            return "retry"
        if receipt is not None:
            return "done"
        counts = self.ledger.counts()
        if until_idle and not counts[TaskStatus.PENDING] and not counts[TaskStatus.LEASED]:
            return "finished"
        return "idle"

    def run(
        self,
        handle: Callable[[Lease], WorkResult],
        *,
        stop: threading.Event | None = None,
        idle_sleep: float = 0.5,
        max_tasks: int | None = None,
        until_idle: bool = False,
    ) -> int:
        """Process tasks until `stop` is set, `max_tasks` are done, or (with `until_idle`)
        nothing is left open. Returns the number of receipts written.

        The loop outlives the database: a transient error (a restart, the server down for a
        while, a full disk) pauses it with capped exponential backoff and jitter, then it
        goes on; a task whose completion could not be recorded returns to the pool when its
        lease expires. Errors that waiting cannot clear are raised.
        """
        done = 0
        backoff = Backoff(self.retry)
        wait = stop.wait if stop is not None else time.sleep
        while (stop is None or not stop.is_set()) and (max_tasks is None or done < max_tasks):
            try:
                step = self._step(handle, until_idle)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                pause = backoff.next()
                logger.warning("%s: database unavailable (%s); pause %.2f s", self.name, exc, pause)
                wait(pause)
                continue
            backoff.reset()
            if step == "finished":
                break
            if step == "done":
                done += 1
            elif step == "idle":
                wait(idle_sleep)
        return done
