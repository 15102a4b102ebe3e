"""The data of two-phase mutation: an intent, its status, and the journal's record of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from attention_scoping.safety.canonical import intent_hash

__all__ = ["BLOCKING", "Intent", "IntentRecord", "IntentStatus"]


class IntentStatus(StrEnum):
    """Where an intent is in its life."""

    PROPOSED = "proposed"
    """Previewed; a confirmation code is out."""
    SUPERSEDED = "superseded"
    """Replaced by a newer preview of the same intent (its code was revoked)."""
    REFUSED = "refused"
    """Confirmed, but refused at execution (a duplicate had run meanwhile)."""
    EXECUTING = "executing"
    """The mutation is running."""
    SUCCEEDED = "succeeded"
    """Applied (directly, or established by reconciliation)."""
    FAILED = "failed"
    """The service refused or the handler raised: known not applied."""
    OUTCOME_UNKNOWN = "outcome_unknown"
    """A transport error struck mid-mutation; reconciliation must settle it."""
    NOT_APPLIED = "not_applied"
    """Reconciliation established that the timed-out mutation did not happen."""


BLOCKING = (IntentStatus.EXECUTING, IntentStatus.OUTCOME_UNKNOWN)
"""Statuses that block any identical intent until they are settled."""


@dataclass(frozen=True)
class Intent:
    """A mutation as it will run: who (account), what (action), on what (target), with what."""

    account: str
    action: str
    target: str
    payload: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The four fields as plain data."""
        return {
            "account": self.account,
            "action": self.action,
            "target": self.target,
            "payload": dict(self.payload),
        }

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON of the four fields (`intent_hash`)."""
        return intent_hash(
            account=self.account, action=self.action, target=self.target, payload=self.payload
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Intent:
        """Rebuild from `as_dict()` output."""
        return cls(data["account"], data["action"], data["target"], dict(data["payload"]))


@dataclass(frozen=True)
class IntentRecord:
    """The journal's view of one proposal and what became of it."""

    intent_id: str
    intent_hash: str
    intent: Intent
    status: IntentStatus
    created_at: float
    updated_at: float
    code_id: str | None = None
    code_expires_at: float | None = None
    preview: Any = None
    result: Any = None
    result_sha256: str | None = None
    result_encoding: str | None = None
    """None: `result` is plain JSON; `"safe-json/v1"`: it held values JSON cannot (NaN, ...),
    recorded in that tagged form (read it back with `canonical.from_safe_json`)."""
    affected_ids: tuple[str, ...] = ()
    error: str | None = None
    correlation: str | None = None
    """Caller's grouping key (a task id, a thread id), for finding a run's intents."""
    reconciled: bool = False
    """True when the final status came from reconciliation after an unknown outcome."""
