"""The intent journal: every proposal and outcome of two-phase mutations, durably recorded.

Two operations must be atomic across every process that shares the journal: `begin` (no two
identical intents may start executing, nor one that just succeeded) and `finish` (a status only
moves forward). `MemoryIntentJournal` serves one process; `SqliteIntentJournal` is durable and
shared through one file. Besides the current record of each intent, an append-only event log
keeps every transition.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from attention_scoping.safety.records import BLOCKING, Intent, IntentRecord, IntentStatus
from attention_scoping.storage.sqlite import SqliteStore

__all__ = ["IntentJournal", "MemoryIntentJournal", "SqliteIntentJournal"]

_FINAL_FROM = {
    IntentStatus.SUCCEEDED: (IntentStatus.EXECUTING,),
    IntentStatus.FAILED: (IntentStatus.EXECUTING,),
    IntentStatus.OUTCOME_UNKNOWN: (IntentStatus.EXECUTING,),
}
_RECONCILED_FROM = (IntentStatus.OUTCOME_UNKNOWN, IntentStatus.EXECUTING)


@runtime_checkable
class IntentJournal(Protocol):
    """Storage of intent records; `begin`, `supersede` and `finish` must be atomic."""

    def add(self, record: IntentRecord) -> None:
        """Store a new proposal."""
        ...

    def get(self, intent_id: str) -> IntentRecord | None:
        """One record, or None."""
        ...

    def by_hash(self, intent_hash: str) -> list[IntentRecord]:
        """Every record of one intent hash, oldest first."""
        ...

    def by_correlation(self, correlation: str) -> list[IntentRecord]:
        """Every record proposed with this correlation key, oldest first."""
        ...

    def supersede(self, intent_hash: str, now: float) -> list[IntentRecord]:
        """Mark live proposals of `intent_hash` superseded; return them as they were."""
        ...

    def begin(
        self, intent_id: str, intent_hash: str, now: float, *, duplicate_since: float
    ) -> tuple[IntentRecord, IntentRecord | None]:
        """Move a proposal to executing, unless a blocker exists: then mark it refused.

        A blocker is another record of the same hash that is executing, has an unknown
        outcome, or succeeded after `duplicate_since`; or the record itself when it is
        no longer a live proposal. Returns (record, blocker).
        """
        ...

    def finish(
        self,
        intent_id: str,
        status: IntentStatus,
        now: float,
        *,
        result: Any = None,
        result_sha256: str | None = None,
        result_encoding: str | None = None,
        affected_ids: Sequence[str] = (),
        error: str | None = None,
        reconciled: bool = False,
    ) -> IntentRecord:
        """Record an outcome (executing -> final, or unknown -> settled when `reconciled`)."""
        ...

    def unresolved(self, stale_before: float) -> list[IntentRecord]:
        """Unknown outcomes, and executions last touched before `stale_before`."""
        ...

    def events(self, intent_id: str | None = None) -> list[dict[str, Any]]:
        """The append-only transition log (all intents, or one)."""
        ...


def _blocker(
    record: IntentRecord, others: Iterable[IntentRecord], duplicate_since: float
) -> IntentRecord | None:
    if record.status is not IntentStatus.PROPOSED:
        return record
    for other in others:
        if other.intent_id == record.intent_id:
            continue
        if other.status in BLOCKING or (
            other.status is IntentStatus.SUCCEEDED and other.updated_at > duplicate_since
        ):
            return other
    return None


def _finished(
    record: IntentRecord | None,
    intent_id: str,
    status: IntentStatus,
    now: float,
    fields: dict[str, Any],
    reconciled: bool,
) -> IntentRecord:
    """The record after `finish`, or the error explaining why the transition is not allowed."""
    if record is None:
        msg = f"no intent {intent_id!r}"
        raise KeyError(msg)
    allowed = (
        _RECONCILED_FROM
        if reconciled and status in (IntentStatus.SUCCEEDED, IntentStatus.NOT_APPLIED)
        else _FINAL_FROM.get(status, ())
    )
    if record.status not in allowed:
        msg = f"intent {intent_id} is {record.status.value}; it cannot become {status.value}"
        raise ValueError(msg)
    return replace(
        record,
        status=status,
        updated_at=now,
        reconciled=reconciled,
        result=fields["result"],
        result_sha256=fields["result_sha256"],
        result_encoding=fields["result_encoding"],
        affected_ids=tuple(fields["affected_ids"]),
        error=fields["error"],
    )


class MemoryIntentJournal:
    """In-process `IntentJournal` (thread-safe); lost when the process ends."""

    def __init__(self) -> None:
        """Create an empty journal."""
        self._lock = threading.Lock()
        self._records: dict[str, IntentRecord] = {}
        self._events: list[dict[str, Any]] = []

    def _log(self, record: IntentRecord, detail: dict[str, Any] | None = None) -> None:
        self._events.append(
            {
                "seq": len(self._events) + 1,
                "intent_id": record.intent_id,
                "status": record.status.value,
                "at": record.updated_at,
                "detail": detail or {},
            }
        )

    def add(self, record: IntentRecord) -> None:
        """Store a new proposal."""
        with self._lock:
            if record.intent_id in self._records:
                msg = f"intent {record.intent_id} exists"
                raise ValueError(msg)
            self._records[record.intent_id] = record
            self._log(record, {"intent_hash": record.intent_hash})

    def get(self, intent_id: str) -> IntentRecord | None:
        """One record, or None."""
        with self._lock:
            return self._records.get(intent_id)

    def by_hash(self, intent_hash: str) -> list[IntentRecord]:
        """Records of one intent hash, oldest first."""
        with self._lock:
            return [r for r in self._records.values() if r.intent_hash == intent_hash]

    def by_correlation(self, correlation: str) -> list[IntentRecord]:
        """Records with this correlation key, oldest first."""
        with self._lock:
            return [r for r in self._records.values() if r.correlation == correlation]

    def supersede(self, intent_hash: str, now: float) -> list[IntentRecord]:
        """Mark live proposals of `intent_hash` superseded."""
        with self._lock:
            live = [
                r
                for r in self._records.values()
                if r.intent_hash == intent_hash and r.status is IntentStatus.PROPOSED
            ]
            for rec in live:
                new = replace(rec, status=IntentStatus.SUPERSEDED, updated_at=now)
                self._records[rec.intent_id] = new
                self._log(new)
            return live

    def begin(
        self, intent_id: str, intent_hash: str, now: float, *, duplicate_since: float
    ) -> tuple[IntentRecord, IntentRecord | None]:
        """Move a proposal to executing unless blocked (see `IntentJournal.begin`)."""
        with self._lock:
            record = self._records.get(intent_id)
            if record is None or record.intent_hash != intent_hash:
                msg = f"no proposal {intent_id!r} for this intent"
                raise KeyError(msg)
            others = [r for r in self._records.values() if r.intent_hash == intent_hash]
            blocker = _blocker(record, others, duplicate_since)
            if blocker is record:
                return record, blocker
            status = IntentStatus.REFUSED if blocker is not None else IntentStatus.EXECUTING
            new = replace(record, status=status, updated_at=now)
            self._records[intent_id] = new
            self._log(new, {"blocked_by": blocker.intent_id} if blocker else None)
            return new, blocker

    def finish(
        self,
        intent_id: str,
        status: IntentStatus,
        now: float,
        *,
        result: Any = None,
        result_sha256: str | None = None,
        result_encoding: str | None = None,
        affected_ids: Sequence[str] = (),
        error: str | None = None,
        reconciled: bool = False,
    ) -> IntentRecord:
        """Record an outcome."""
        fields = {
            "result": result,
            "result_sha256": result_sha256,
            "result_encoding": result_encoding,
            "affected_ids": affected_ids,
            "error": error,
        }
        with self._lock:
            new = _finished(
                self._records.get(intent_id), intent_id, status, now, fields, reconciled
            )
            self._records[intent_id] = new
            self._log(new, {"reconciled": reconciled, "error": error})
            return new

    def unresolved(self, stale_before: float) -> list[IntentRecord]:
        """Unknown outcomes and stale executions."""
        with self._lock:
            return [
                r
                for r in self._records.values()
                if r.status is IntentStatus.OUTCOME_UNKNOWN
                or (r.status is IntentStatus.EXECUTING and r.updated_at < stale_before)
            ]

    def events(self, intent_id: str | None = None) -> list[dict[str, Any]]:
        """The transition log."""
        with self._lock:
            return [e for e in self._events if intent_id is None or e["intent_id"] == intent_id]


_COLUMNS = (
    "intent_id, intent_hash, intent, status, created_at, updated_at, code_id, code_expires_at, "
    "preview, result, result_sha256, affected_ids, error, correlation, reconciled, "
    "result_encoding"
)

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS safety_intents (
        intent_id TEXT PRIMARY KEY, intent_hash TEXT NOT NULL, intent TEXT NOT NULL,
        status TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
        code_id TEXT, code_expires_at REAL, preview TEXT, result TEXT, result_sha256 TEXT,
        affected_ids TEXT NOT NULL DEFAULT '[]', error TEXT, correlation TEXT,
        reconciled INTEGER NOT NULL DEFAULT 0, result_encoding TEXT)""",
    "CREATE INDEX IF NOT EXISTS safety_intents_hash ON safety_intents (intent_hash)",
    "CREATE INDEX IF NOT EXISTS safety_intents_corr ON safety_intents (correlation)",
    """CREATE TABLE IF NOT EXISTS safety_intent_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, intent_id TEXT NOT NULL, status TEXT NOT NULL,
        at REAL NOT NULL, detail TEXT NOT NULL)""",
    """CREATE TRIGGER IF NOT EXISTS safety_intent_events_no_update
        BEFORE UPDATE ON safety_intent_events
        BEGIN SELECT RAISE(ABORT, 'safety_intent_events is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS safety_intent_events_no_delete
        BEFORE DELETE ON safety_intent_events
        BEGIN SELECT RAISE(ABORT, 'safety_intent_events is append-only'); END""",
)


def _row(row: Sequence[Any]) -> IntentRecord:
    (iid, ihash, intent, status, created, updated, code_id, code_exp) = row[:8]
    (preview, result, rsha, affected, error, corr, reconciled, encoding) = row[8:]
    return IntentRecord(
        intent_id=iid,
        intent_hash=ihash,
        intent=Intent.from_dict(json.loads(intent)),
        status=IntentStatus(status),
        created_at=created,
        updated_at=updated,
        code_id=code_id,
        code_expires_at=code_exp,
        preview=json.loads(preview) if preview is not None else None,
        result=json.loads(result) if result is not None else None,
        result_sha256=rsha,
        result_encoding=encoding,
        affected_ids=tuple(json.loads(affected)),
        error=error,
        correlation=corr,
        reconciled=bool(reconciled),
    )


def _values(r: IntentRecord) -> tuple[Any, ...]:
    return (
        r.intent_id,
        r.intent_hash,
        json.dumps(r.intent.as_dict(), sort_keys=True),
        r.status.value,
        r.created_at,
        r.updated_at,
        r.code_id,
        r.code_expires_at,
        json.dumps(r.preview) if r.preview is not None else None,
        json.dumps(r.result) if r.result is not None else None,
        r.result_sha256,
        json.dumps(list(r.affected_ids)),
        r.error,
        r.correlation,
        int(r.reconciled),
        r.result_encoding,
    )


def _add_encoding(conn: sqlite3.Connection) -> None:
    """Give a journal written before results had an encoding its `result_encoding` column."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(safety_intents)")}
    if "result_encoding" not in columns:
        conn.execute("ALTER TABLE safety_intents ADD COLUMN result_encoding TEXT")


class SqliteIntentJournal(SqliteStore):
    """`IntentJournal` in a SQLite file, shared by every process that opens it.

    It can share a file with `SqliteTokenStore` and `SqliteLedger` (distinct tables). Its
    `retry` (default `RetryPolicy()`) retries recording an outcome through a transient error
    (a lock held too long, a full disk), so an applied change is not left `executing` by a
    passing fault.
    """

    SCHEMA = _SCHEMA
    LABEL = "intent journal"

    def _migrate(self, conn: sqlite3.Connection) -> None:
        _add_encoding(conn)

    @staticmethod
    def _log(conn: Any, record: IntentRecord, detail: dict[str, Any] | None = None) -> None:
        conn.execute(
            "INSERT INTO safety_intent_events (intent_id, status, at, detail) VALUES (?, ?, ?, ?)",
            (record.intent_id, record.status.value, record.updated_at, json.dumps(detail or {})),
        )

    @staticmethod
    def _put(conn: Any, record: IntentRecord) -> None:
        conn.execute(
            f"INSERT OR REPLACE INTO safety_intents ({_COLUMNS}) VALUES ({', '.join('?' * 16)})",
            _values(record),
        )

    def _select(self, where: str, params: Sequence[Any], conn: Any = None) -> list[IntentRecord]:
        sql = f"SELECT {_COLUMNS} FROM safety_intents WHERE {where} ORDER BY created_at, rowid"
        rows = (
            conn.execute(sql, params).fetchall() if conn is not None else self.db.query(sql, params)
        )
        return [_row(r) for r in rows]

    def add(self, record: IntentRecord) -> None:
        """Store a new proposal."""
        with self.db.write() as conn:
            if self._select("intent_id = ?", (record.intent_id,), conn):
                msg = f"intent {record.intent_id} exists"
                raise ValueError(msg)
            self._put(conn, record)
            self._log(conn, record, {"intent_hash": record.intent_hash})

    def get(self, intent_id: str) -> IntentRecord | None:
        """One record, or None."""
        found = self._select("intent_id = ?", (intent_id,))
        return found[0] if found else None

    def by_hash(self, intent_hash: str) -> list[IntentRecord]:
        """Records of one intent hash, oldest first."""
        return self._select("intent_hash = ?", (intent_hash,))

    def by_correlation(self, correlation: str) -> list[IntentRecord]:
        """Records with this correlation key, oldest first."""
        return self._select("correlation = ?", (correlation,))

    def supersede(self, intent_hash: str, now: float) -> list[IntentRecord]:
        """Mark live proposals of `intent_hash` superseded."""
        with self.db.write() as conn:
            live = self._select(
                "intent_hash = ? AND status = ?", (intent_hash, IntentStatus.PROPOSED.value), conn
            )
            for rec in live:
                new = replace(rec, status=IntentStatus.SUPERSEDED, updated_at=now)
                self._put(conn, new)
                self._log(conn, new)
            return live

    def begin(
        self, intent_id: str, intent_hash: str, now: float, *, duplicate_since: float
    ) -> tuple[IntentRecord, IntentRecord | None]:
        """Move a proposal to executing unless blocked (atomic across processes)."""
        with self.db.write() as conn:
            others = self._select("intent_hash = ?", (intent_hash,), conn)
            record = next((r for r in others if r.intent_id == intent_id), None)
            if record is None:
                msg = f"no proposal {intent_id!r} for this intent"
                raise KeyError(msg)
            blocker = _blocker(record, others, duplicate_since)
            if blocker is record:
                return record, blocker
            status = IntentStatus.REFUSED if blocker is not None else IntentStatus.EXECUTING
            new = replace(record, status=status, updated_at=now)
            self._put(conn, new)
            self._log(conn, new, {"blocked_by": blocker.intent_id} if blocker else None)
            return new, blocker

    def finish(
        self,
        intent_id: str,
        status: IntentStatus,
        now: float,
        *,
        result: Any = None,
        result_sha256: str | None = None,
        result_encoding: str | None = None,
        affected_ids: Sequence[str] = (),
        error: str | None = None,
        reconciled: bool = False,
    ) -> IntentRecord:
        """Record an outcome (atomic across processes)."""
        fields = {
            "result": result,
            "result_sha256": result_sha256,
            "result_encoding": result_encoding,
            "affected_ids": affected_ids,
            "error": error,
        }

        def attempt(again: bool) -> IntentRecord:
            with self.db.write() as conn:
                found = self._select("intent_id = ?", (intent_id,), conn)
                if again and found and found[0].status is status and found[0].updated_at == now:
                    return found[0]  # the first attempt committed before its reply was lost
                new = _finished(
                    found[0] if found else None, intent_id, status, now, fields, reconciled
                )
                self._put(conn, new)
                self._log(conn, new, {"reconciled": reconciled, "error": error})
                return new

        return self.retry.run(attempt, what="intent journal finish", reset=self.db.reset)

    def unresolved(self, stale_before: float) -> list[IntentRecord]:
        """Unknown outcomes and stale executions."""
        return self._select(
            "status = ? OR (status = ? AND updated_at < ?)",
            (IntentStatus.OUTCOME_UNKNOWN.value, IntentStatus.EXECUTING.value, stale_before),
        )

    def events(self, intent_id: str | None = None) -> list[dict[str, Any]]:
        """The transition log."""
        sql = "SELECT seq, intent_id, status, at, detail FROM safety_intent_events"
        rows = (
            self.db.query(sql + " WHERE intent_id = ? ORDER BY seq", (intent_id,))
            if intent_id is not None
            else self.db.query(sql + " ORDER BY seq")
        )
        return [
            {"seq": s, "intent_id": i, "status": st, "at": at, "detail": json.loads(d)}
            for s, i, st, at, d in rows
        ]

    def close(self) -> None:
        """Close the file."""
        self.db.close()
