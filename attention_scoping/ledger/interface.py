"""The task ledger's contract: tasks, leases, receipts, events, errors, and the interface.

A coordinator writes tasks; workers claim them with expiring leases, heartbeat while they work
and complete them with a receipt (status, SHA-256 of the output, affected resource ids). A lease
that expires returns its task to the pool, and from then on only the new holder can complete it.
Every change is an event in an append-only log. Backends: `SqliteLedger` (default) and
`PostgresLedger`; both pass the same test suite.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from attention_scoping.errors import AttentionScopingError

__all__ = [
    "AlreadyCompletedError",
    "EventKind",
    "Lease",
    "LeaseLostError",
    "LedgerError",
    "LedgerEvent",
    "NotALedgerError",
    "Receipt",
    "TaskExistsError",
    "TaskInfo",
    "TaskLedger",
    "TaskStatus",
    "UnknownTaskError",
    "content_sha256",
]


class TaskStatus(StrEnum):
    """Where a task is."""

    PENDING = "pending"
    LEASED = "leased"
    COMPLETED = "completed"
    FAILED = "failed"


class EventKind(StrEnum):
    """What an event of the append-only log records."""

    CREATED = "created"
    LEASED = "leased"
    HEARTBEAT = "heartbeat"
    COMPLETED = "completed"
    FAILED = "failed"
    EXPIRED = "expired"


class LedgerError(AttentionScopingError):
    """Base of the ledger's refusals."""


class TaskExistsError(LedgerError):
    """A task with this id was already created."""


class UnknownTaskError(LedgerError, KeyError):
    """No task has this id."""


class LeaseLostError(LedgerError):
    """The lease is no longer the task's: it expired and the task went back to the pool or to
    another worker. The holder must stop; its completion would be refused."""


class AlreadyCompletedError(LedgerError):
    """The task already has its receipt; a task is completed once."""


class NotALedgerError(LedgerError, ValueError):
    """The file is not a ledger and would not become one safely: empty (0 bytes), not a SQLite
    database, a database of another application, or ledger tables of another shape."""


@dataclass(frozen=True)
class Lease:
    """A worker's claim on a task until `expires_at`; `lease_id` proves it."""

    task_id: str
    lease_id: str
    worker: str
    attempt: int
    """1 for the first claim, +1 for each later one: usable as a fencing token downstream."""
    expires_at: float
    lease_seconds: float
    kind: str
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class Receipt:
    """The terminal record of a task: all a coordinator reads about the work."""

    task_id: str
    status: TaskStatus
    content_sha256: str | None
    affected_ids: tuple[str, ...]
    worker: str
    lease_id: str
    attempt: int
    completed_at: float
    seq: int
    """Position in the event log, for polling receipts after a known point."""
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The receipt as JSON-ready data."""
        return {
            "task_id": self.task_id,
            "status": self.status.value,
            "content_sha256": self.content_sha256,
            "affected_ids": list(self.affected_ids),
            "worker": self.worker,
            "attempt": self.attempt,
            "completed_at": self.completed_at,
            "error": self.error,
        }


@dataclass(frozen=True)
class TaskInfo:
    """A task's current state (an operator's view)."""

    task_id: str
    kind: str
    payload: Mapping[str, Any]
    status: TaskStatus
    attempts: int
    max_attempts: int | None
    worker: str | None
    ready_at: float | None
    """Pending: when it may be claimed; leased: when the lease expires; terminal: None."""
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class LedgerEvent:
    """One entry of the append-only log."""

    seq: int
    task_id: str
    kind: EventKind
    at: float
    worker: str | None = None
    lease_id: str | None = None
    attempt: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


def content_sha256(output: str | bytes) -> str:
    """SHA-256 (hex) of a task's output; text is encoded as UTF-8."""
    raw = output.encode("utf-8") if isinstance(output, str) else output
    return hashlib.sha256(raw).hexdigest()


class TaskLedger(ABC):
    """Append-only task ledger with expiring leases and receipts.

    All methods are safe to call from several threads of one process and from several
    processes at once (each process opens its own ledger object).
    """

    @abstractmethod
    def create(
        self,
        payload: Mapping[str, Any],
        *,
        task_id: str | None = None,
        kind: str = "task",
        max_attempts: int | None = None,
        delay: float = 0.0,
    ) -> str:
        """Add a pending task and return its id (generated when not given); it may be claimed
        `delay` seconds from now.

        Raises:
            TaskExistsError: `task_id` is taken.
            ValueError: `delay` is not finite, >= 0 and at most `bounds.MAX_DELAY_SECONDS`
                (366 days).
        """

    @abstractmethod
    def create_many(
        self, payloads: Iterable[Mapping[str, Any]], *, kind: str = "task"
    ) -> list[str]:
        """Add many pending tasks in one transaction; their ids in order."""

    @abstractmethod
    def claim(
        self, worker: str, *, lease_seconds: float = 30.0, kinds: Sequence[str] | None = None
    ) -> Lease | None:
        """Lease the oldest claimable task (pending, or leased with an expired lease), or None.

        Taking over an expired lease logs an `expired` event for the old holder. A task whose
        attempts reached `max_attempts` is failed with a receipt instead of being leased again.

        Raises:
            ValueError: `lease_seconds` is not finite, > 0 and at most
                `bounds.MAX_LEASE_SECONDS` (one week).
        """

    @abstractmethod
    def heartbeat(self, lease: Lease, *, lease_seconds: float | None = None) -> Lease:
        """Extend `lease` (by its original duration unless given) and return the new lease.

        Raises:
            ValueError: `lease_seconds` is out of bounds (as `claim`).
            LeaseLostError: the lease is no longer the task's.
            AlreadyCompletedError: the task has its receipt.
        """

    @abstractmethod
    def complete(
        self,
        lease: Lease,
        output: str | bytes | None = None,
        *,
        content_sha256: str | None = None,
        affected_ids: Iterable[str] = (),
    ) -> Receipt:
        """Finish the task with a `completed` receipt (hash of `output`, affected ids).

        Raises:
            LeaseLostError: the lease is no longer the task's (a stale holder).
            AlreadyCompletedError: the task already has its receipt (a double completion).
        """

    @abstractmethod
    def fail(
        self, lease: Lease, error: str, *, retry: bool = False, retry_after: float = 0.0
    ) -> Receipt | None:
        """Give up on the task: back to the pool after `retry_after` s (`retry=True`, while
        attempts remain; returns None) or terminally, with a `failed` receipt.

        Raises:
            ValueError: `retry_after` is out of bounds (as `create`'s `delay`).
            LeaseLostError, AlreadyCompletedError: as `complete`.
        """

    @abstractmethod
    def expire_leases(self) -> int:
        """Return every task with an expired lease to the pool now; the number returned."""

    @abstractmethod
    def receipt(self, task_id: str) -> Receipt | None:
        """The task's receipt, or None while it is not finished.

        Raises:
            UnknownTaskError: no such task.
        """

    @abstractmethod
    def receipts(
        self,
        *,
        task_ids: Sequence[str] | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[Receipt]:
        """Receipts in completion order (of `task_ids` only, when given; after `after_seq`)."""

    @abstractmethod
    def task(self, task_id: str) -> TaskInfo:
        """A task's current state.

        Raises:
            UnknownTaskError: no such task.
        """

    @abstractmethod
    def counts(self) -> dict[TaskStatus, int]:
        """Number of tasks per status (every status present, zeros included)."""

    @abstractmethod
    def events(
        self, task_id: str | None = None, *, after_seq: int = 0, limit: int | None = None
    ) -> list[LedgerEvent]:
        """The append-only log in order (of one task, when given)."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""

    def __enter__(self) -> TaskLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
