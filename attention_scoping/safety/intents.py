"""Two-phase mutation: preview and confirm an exact intent, then run it once, never blindly twice.

Phase 1 (`IntentGuard.propose`): run the tool's dry run, hash the intent (account, action,
target, payload) as canonical JSON, refuse a duplicate of a recent intent, and issue a short
confirmation code bound to that hash. Phase 2 (`IntentGuard.execute`): run the mutation only if
the code matches the hash of what is about to run and is unexpired and unused. A transport
timeout during the mutation is recorded as `outcome_unknown` and handed to a reconciliation
hook; the mutation is never retried by the guard, and an identical intent is refused until the
outcome is known. Every step is written to an `IntentJournal` (durable with SQLite).

Framework-free; `ManifestMiddleware` is the LangChain adapter.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from attention_scoping.common.failures import exception_line
from attention_scoping.errors import AttentionScopingError, ScopeConfigError
from attention_scoping.safety.aio import call_async
from attention_scoping.safety.canonical import canonical_json, plain_json, sha256_hex, to_safe_json
from attention_scoping.safety.journal import IntentJournal, MemoryIntentJournal
from attention_scoping.safety.records import BLOCKING, Intent, IntentRecord, IntentStatus
from attention_scoping.storage.retry import is_transient

if TYPE_CHECKING:
    from attention_scoping.safety.tokens import TokenIssuer

__all__ = [
    "DuplicateIntentError",
    "Intent",
    "IntentError",
    "IntentGuard",
    "IntentRecord",
    "IntentStatus",
    "Outcome",
    "OutcomeUnknownError",
    "PreflightError",
    "Proposal",
    "Reconciliation",
    "StoreUnavailableError",
    "UnresolvedIntentError",
]

logger = logging.getLogger(__name__)


class IntentError(AttentionScopingError):
    """Base of the guard's refusals; `reason` names the kind in one word."""

    reason: ClassVar[str] = "intent_error"


class PreflightError(IntentError):
    """Raised by a dry run to refuse an intent (not permitted, target missing, no-op...)."""

    reason = "preflight_refused"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        """Keep the message and, when one argument is at fault, its name."""
        super().__init__(message)
        self.field = field


class DuplicateIntentError(IntentError):
    """The identical intent succeeded recently; running it again would repeat the change."""

    reason = "duplicate_intent"

    def __init__(self, message: str, existing: IntentRecord) -> None:
        """Keep the record of the earlier run."""
        super().__init__(message)
        self.existing = existing


class UnresolvedIntentError(DuplicateIntentError):
    """The identical intent is running or has an unknown outcome: no retry until it is settled."""

    reason = "unresolved_intent"


class StoreUnavailableError(IntentError):
    """The token store or the journal stayed unavailable before the mutation: nothing ran."""

    reason = "store_unavailable"


class OutcomeUnknownError(AttentionScopingError):
    """Raise from a mutation handler when it cannot tell whether the change was applied."""


@dataclass(frozen=True)
class Reconciliation:
    """A reconciliation hook's finding about a timed-out mutation."""

    applied: bool | None
    """True: it happened; False: it did not; None: still unknown."""
    result: Any = None
    affected_ids: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Proposal:
    """Phase 1's answer: the code to confirm with and the preview it confirms."""

    intent_id: str
    intent_hash: str
    code: str
    expires_at: float
    preview: Any
    superseded: tuple[str, ...] = ()
    """Ids of earlier live proposals of the same intent whose codes were revoked."""


@dataclass(frozen=True)
class Outcome:
    """Phase 2's answer: what happened to the mutation."""

    record: IntentRecord
    reconciliation: Reconciliation | None = None

    @property
    def status(self) -> IntentStatus:
        """Final status of the intent."""
        return self.record.status

    @property
    def result(self) -> Any:
        """The handler's (or reconciliation's) result."""
        return self.record.result

    @property
    def applied(self) -> bool | None:
        """True if applied, False if known not applied, None if unknown."""
        if self.record.status is IntentStatus.SUCCEEDED:
            return True
        if self.record.status is IntentStatus.OUTCOME_UNKNOWN:
            return None
        return False


def _recorded(result: Any) -> dict[str, Any]:
    """A result as the journal keeps it: JSON (tagged where plain JSON cannot hold it, e.g.
    NaN), its encoding and its SHA-256. Never raises: the change already happened."""
    stored, encoding = to_safe_json(result)
    return {
        "result": stored,
        "result_encoding": encoding,
        "result_sha256": sha256_hex(canonical_json(stored)),
    }


@dataclass
class _Plan:
    """What `execute` needs between its checks and the mutation."""

    record: IntentRecord
    transport_errors: tuple[type[BaseException], ...] = field(default_factory=tuple)


class IntentGuard:
    """Preview-then-confirm execution of mutations with duplicate and timeout safety.

    Args:
        issuer: Issues and redeems the confirmation codes (one key, one store for the service).
        journal: Durable record of intents; `MemoryIntentJournal()` by default,
            `SqliteIntentJournal(path)` to survive restarts and share between processes.
        code_ttl: Seconds a confirmation code stays valid.
        duplicate_window: Seconds during which a succeeded intent blocks an identical one
            (0 disables the check; running or unknown-outcome intents always block).
        transport_errors: Exceptions meaning "the outcome is unknown" for every tool.
        clock: Seconds since the epoch (defaults to the issuer's clock).

    Example:
        ```python
        guard = IntentGuard(TokenIssuer(store=SqliteTokenStore("safety.db")),
                            SqliteIntentJournal("safety.db"))
        intent = Intent("acme", "repo__comment", "issue/42", {"issue": 42, "body": "Fixed"})
        proposal = guard.propose(intent, preflight=lambda: {"will_post_on": "issue 42"})
        outcome = guard.execute(proposal.code, intent, lambda: tracker.comment(42, "Fixed"))
        ```
    """

    def __init__(
        self,
        issuer: TokenIssuer,
        journal: IntentJournal | None = None,
        *,
        code_ttl: float = 300.0,
        duplicate_window: float = 600.0,
        transport_errors: tuple[type[BaseException], ...] = (TimeoutError, OutcomeUnknownError),
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Keep the collaborators and policies."""
        if code_ttl <= 0 or duplicate_window < 0:
            msg = "code_ttl must be positive and duplicate_window non-negative"
            raise ScopeConfigError(msg)
        self.issuer = issuer
        self.journal: IntentJournal = journal if journal is not None else MemoryIntentJournal()
        self.code_ttl = code_ttl
        self.duplicate_window = duplicate_window
        self.transport_errors = tuple(transport_errors)
        self.clock: Callable[[], float] = clock if clock is not None else issuer.clock

    # -- phase 1 ----------------------------------------------------------------------------

    def _screen(self, intent: Intent, now: float) -> None:
        """Refuse a duplicate or an unresolved identical intent (before any dry run)."""
        digest = intent.hash
        for rec in self.journal.by_hash(digest):
            if rec.status in BLOCKING:
                msg = (
                    f"an identical {intent.action} call is {rec.status.value.replace('_', ' ')} "
                    f"(intent {rec.intent_id}); it must be settled before the same change is "
                    "tried again"
                )
                raise UnresolvedIntentError(msg, rec)
            if (
                rec.status is IntentStatus.SUCCEEDED
                and self.duplicate_window
                and rec.updated_at > now - self.duplicate_window
            ):
                ago = max(0.0, now - rec.updated_at)
                msg = (
                    f"this exact {intent.action} call already succeeded {ago:.0f} s ago "
                    f"(intent {rec.intent_id}); repeating it would apply the change twice"
                )
                raise DuplicateIntentError(msg, rec)

    def _record_proposal(self, intent: Intent, preview: Any, correlation: str | None) -> Proposal:
        """Revoke earlier live proposals of the intent, issue its code, journal the proposal."""
        now = self.clock()
        digest = intent.hash
        earlier = self.journal.supersede(digest, now)
        for rec in earlier:
            if rec.code_id:
                self.issuer.revoke_code(rec.code_id)
        superseded = tuple(r.intent_id for r in earlier)
        intent_id = uuid.uuid4().hex
        code = self.issuer.issue_code(digest, ttl=self.code_ttl, data={"intent_id": intent_id})
        preview = plain_json(preview if preview is not None else {"would_run": intent.as_dict()})
        record = IntentRecord(
            intent_id=intent_id,
            intent_hash=digest,
            intent=intent,
            status=IntentStatus.PROPOSED,
            created_at=now,
            updated_at=now,
            code_id=code.code_id,
            code_expires_at=code.expires_at,
            preview=preview,
            correlation=correlation,
        )
        self.journal.add(record)
        return Proposal(intent_id, digest, code.code, code.expires_at, preview, superseded)

    def propose(
        self,
        intent: Intent,
        *,
        preflight: Callable[[], Mapping[str, Any] | None] | None = None,
        correlation: str | None = None,
    ) -> Proposal:
        """Phase 1: screen for duplicates, run the dry run, issue a code bound to the intent.

        Raises:
            DuplicateIntentError: the identical intent succeeded within `duplicate_window`.
            UnresolvedIntentError: the identical intent is running or has an unknown outcome.
            PreflightError: the dry run refused (nothing is recorded as proposed).
        """
        canonical_json(intent.as_dict())  # refuses non-JSON payloads before anything happens
        self._screen(intent, self.clock())
        preview = preflight() if preflight is not None else None
        return self._record_proposal(intent, preview, correlation)

    async def apropose(
        self,
        intent: Intent,
        *,
        preflight: Callable[[], Mapping[str, Any] | Awaitable[Mapping[str, Any] | None] | None]
        | None = None,
        correlation: str | None = None,
    ) -> Proposal:
        """Async `propose` (the dry run may be async)."""
        canonical_json(intent.as_dict())
        self._screen(intent, self.clock())
        preview = await call_async(preflight) if preflight is not None else None
        return self._record_proposal(intent, preview, correlation)

    # -- phase 2 ----------------------------------------------------------------------------

    def _begin(
        self, code: str, intent: Intent, transport_errors: Iterable[type[BaseException]]
    ) -> _Plan:
        """`_start`, with a store that stays unavailable reported as a refusal (nothing ran)."""
        try:
            return self._start(code, intent, transport_errors)
        except Exception as exc:
            if not is_transient(exc):
                raise
            msg = (
                f"the safety store is unavailable ({exception_line(exc)}); the change was "
                "not made, and this confirmation may be used up: preview the call again"
            )
            raise StoreUnavailableError(msg) from exc

    def _start(
        self, code: str, intent: Intent, transport_errors: Iterable[type[BaseException]]
    ) -> _Plan:
        """Redeem the code for this exact intent and mark it executing (atomically unique)."""
        digest = intent.hash
        grant = self.issuer.redeem_code(code, digest)  # TokenError on any mismatch
        intent_id = str(grant.data.get("intent_id", ""))
        now = self.clock()
        since = now - self.duplicate_window if self.duplicate_window else float("inf")
        try:
            record, blocker = self.journal.begin(intent_id, digest, now, duplicate_since=since)
        except KeyError as exc:
            msg = f"the journal has no proposal {intent_id!r} for this code; preview again"
            raise IntentError(msg) from exc
        if blocker is not None and blocker.intent_id == intent_id:
            msg = (
                f"this confirmation's proposal is {blocker.status.value}, not awaiting "
                "confirmation; preview the call again"
            )
            raise IntentError(msg)
        if blocker is not None:
            if blocker.status in BLOCKING:
                msg = (
                    f"an identical {intent.action} call is "
                    f"{blocker.status.value.replace('_', ' ')} (intent {blocker.intent_id}); "
                    "this confirmation was not executed"
                )
                raise UnresolvedIntentError(msg, blocker)
            msg = (
                f"an identical {intent.action} call succeeded meanwhile "
                f"(intent {blocker.intent_id}); this confirmation was not executed"
            )
            raise DuplicateIntentError(msg, blocker)
        return _Plan(record, (*self.transport_errors, *transport_errors))

    def _succeed(
        self, plan: _Plan, result: Any, affected: Callable[[Any], Iterable[str]] | None
    ) -> Outcome:
        try:
            ids = tuple(str(i) for i in affected(result)) if affected is not None else ()
        except Exception:  # the change happened: record it even if the id hook is broken
            logger.exception("affected-ids hook failed for intent %s", plan.record.intent_id)
            ids = ()
        record = self._finish(plan, IntentStatus.SUCCEEDED, affected_ids=ids, **_recorded(result))
        return Outcome(record)

    def _fail(self, plan: _Plan, exc: BaseException) -> Outcome:
        error = exception_line(exc)
        return Outcome(self._finish(plan, IntentStatus.FAILED, error=error))

    def _unknown(self, plan: _Plan, exc: BaseException) -> IntentRecord:
        error = exception_line(exc)
        logger.warning("intent %s: outcome unknown after %s", plan.record.intent_id, error)
        return self._finish(plan, IntentStatus.OUTCOME_UNKNOWN, error=error)

    def _finish(self, plan: _Plan, status: IntentStatus, **fields: Any) -> IntentRecord:
        """Record what the mutation did. If the journal stays unavailable, the caller still
        gets the truth (an unsaved record) and the run goes on; the journal keeps the intent
        `executing`, so identical calls stay blocked and `unresolved()` lists it."""
        now = self.clock()
        try:
            return self.journal.finish(plan.record.intent_id, status, now, **fields)
        except Exception as exc:
            if not is_transient(exc):
                raise
            logger.exception(
                "intent %s is %s but the journal is unavailable; it stays executing there "
                "until reconciled",
                plan.record.intent_id,
                status.value,
            )
            return replace(plan.record, status=status, updated_at=now, **fields)

    def _settle(self, record: IntentRecord, finding: Any) -> Outcome:
        """Apply a reconciliation hook's finding to an unknown-outcome record."""
        if isinstance(finding, bool) or finding is None:
            finding = Reconciliation(applied=finding)
        if not isinstance(finding, Reconciliation):
            msg = f"a reconcile hook must return Reconciliation, bool or None, not {finding!r}"
            raise TypeError(msg)
        if finding.applied is None:
            return Outcome(record, finding)
        try:
            settled = self.resolve(
                record.intent_id,
                applied=finding.applied,
                result=finding.result,
                affected_ids=finding.affected_ids,
                note=finding.note,
            )
        except Exception as exc:
            if not is_transient(exc):
                raise
            logger.exception("intent %s: reconciliation not recorded", record.intent_id)
            return Outcome(record, finding)  # still unknown in the journal: reconciled later
        return Outcome(settled, finding)

    def execute(
        self,
        code: str,
        intent: Intent,
        mutate: Callable[[], Any],
        *,
        reconcile: Callable[[IntentRecord], Any] | None = None,
        affected: Callable[[Any], Iterable[str]] | None = None,
        transport_errors: Iterable[type[BaseException]] = (),
    ) -> Outcome:
        """Phase 2: run `mutate()` once if `code` confirms exactly `intent`.

        Returns an `Outcome`: `succeeded`, `failed` (the handler raised: known not applied),
        or `outcome_unknown` / `not_applied` / `succeeded` after a transport error, depending
        on what `reconcile(record)` found. Never retries.

        Raises:
            TokenError: the code is malformed, unknown, for another intent, revoked, used or
                expired (nothing ran).
            DuplicateIntentError: an identical intent ran meanwhile (nothing ran).
        """
        plan = self._begin(code, intent, transport_errors)
        try:
            result = mutate()
        except plan.transport_errors as exc:
            record = self._unknown(plan, exc)
            return self._reconcile(record, reconcile)
        except Exception as exc:
            return self._fail(plan, exc)
        except BaseException as exc:  # interrupted mid-mutation: nobody knows what happened
            self._unknown(plan, exc)
            raise
        return self._succeed(plan, result, affected)

    async def aexecute(
        self,
        code: str,
        intent: Intent,
        mutate: Callable[[], Any],
        *,
        reconcile: Callable[[IntentRecord], Any] | None = None,
        affected: Callable[[Any], Iterable[str]] | None = None,
        transport_errors: Iterable[type[BaseException]] = (),
    ) -> Outcome:
        """Async `execute`: `mutate` and `reconcile` may be async; cancellation = unknown."""
        plan = self._begin(code, intent, transport_errors)
        try:
            result = await call_async(mutate)
        except plan.transport_errors as exc:
            record = self._unknown(plan, exc)
            if reconcile is None:
                return Outcome(record)
            try:
                finding = await call_async(reconcile, record)
            except Exception:
                logger.exception("reconcile hook failed for intent %s", record.intent_id)
                return Outcome(record)
            return self._settle(record, finding)
        except Exception as exc:
            return self._fail(plan, exc)
        except BaseException as exc:
            self._unknown(plan, exc)
            raise
        return self._succeed(plan, result, affected)

    def _reconcile(
        self, record: IntentRecord, reconcile: Callable[[IntentRecord], Any] | None
    ) -> Outcome:
        if reconcile is None:
            return Outcome(record)
        try:
            finding = reconcile(record)
        except Exception:
            logger.exception("reconcile hook failed for intent %s", record.intent_id)
            return Outcome(record)
        return self._settle(record, finding)

    # -- settling and reading ---------------------------------------------------------------

    def resolve(
        self,
        intent_id: str,
        *,
        applied: bool,
        result: Any = None,
        affected_ids: Iterable[str] = (),
        note: str = "",
    ) -> IntentRecord:
        """Settle an `outcome_unknown` intent out of band (an operator, a reconciliation job).

        Raises:
            KeyError: no such intent.
            ValueError: the intent is not awaiting reconciliation.
        """
        status = IntentStatus.SUCCEEDED if applied else IntentStatus.NOT_APPLIED
        recorded = _recorded(result)
        if not applied:
            recorded["result_sha256"] = None
        return self.journal.finish(
            intent_id,
            status,
            self.clock(),
            **recorded,
            affected_ids=tuple(str(i) for i in affected_ids),
            error=note or None,
            reconciled=True,
        )

    def unresolved(self, *, stale_after: float = 3600.0) -> list[IntentRecord]:
        """Intents needing reconciliation: unknown outcomes, and executions older than
        `stale_after` seconds (their process died mid-mutation)."""
        return self.journal.unresolved(self.clock() - stale_after)

    def record(self, intent_id: str) -> IntentRecord | None:
        """The journal record of `intent_id`."""
        return self.journal.get(intent_id)
