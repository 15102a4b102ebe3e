"""Two-phase execution in the framework-free core: codes, duplicates, timeouts, reconciliation."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from attention_scoping.safety import (
    CanonicalJSONError,
    DuplicateIntentError,
    ExpiredTokenError,
    Intent,
    IntentGuard,
    IntentMismatchError,
    IntentStatus,
    OutcomeUnknownError,
    PreflightError,
    Reconciliation,
    ReplayedTokenError,
    RevokedCodeError,
    SqliteIntentJournal,
    SqliteTokenStore,
    TokenIssuer,
    UnresolvedIntentError,
)
from attention_scoping.safety.records import IntentRecord
from tests.safety_support import SECRET, FakeClock, backend_guard

INTENT = Intent("acme", "repo__comment", "42", {"issue": 42, "body": "Fixed in #43"})


class Service:
    """A remote service: counts calls; can lose the reply after applying the change."""

    def __init__(self) -> None:
        self.calls = 0
        self.applied: list[str] = []
        self.fail_with: BaseException | None = None
        self.apply_before_failing = True

    def mutate(self, body: str = "Fixed in #43") -> dict[str, Any]:
        self.calls += 1
        if self.fail_with is not None:
            if self.apply_before_failing:
                self.applied.append(body)
            raise self.fail_with
        self.applied.append(body)
        return {"comment_id": len(self.applied)}


@pytest.fixture(params=["memory", "sqlite"])
def guard(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> IntentGuard:
    return backend_guard(request.param, tmp_path, clock, code_ttl=120, duplicate_window=600)


@pytest.fixture
def service() -> Service:
    return Service()


def test_preview_then_execute_once(guard: IntentGuard, service: Service) -> None:
    proposal = guard.propose(INTENT, preflight=lambda: {"will_post_on": 42})
    assert proposal.preview == {"will_post_on": 42} and proposal.intent_hash == INTENT.hash
    assert service.calls == 0
    record = guard.record(proposal.intent_id)
    assert record is not None and record.status is IntentStatus.PROPOSED
    outcome = guard.execute(
        proposal.code, INTENT, service.mutate, affected=lambda r: [f"comment/{r['comment_id']}"]
    )
    assert outcome.status is IntentStatus.SUCCEEDED and outcome.applied is True
    assert outcome.result == {"comment_id": 1} and outcome.record.affected_ids == ("comment/1",)
    assert outcome.record.result_sha256 and service.calls == 1
    with pytest.raises(ReplayedTokenError):
        guard.execute(proposal.code, INTENT, service.mutate)
    assert service.calls == 1
    statuses = [e["status"] for e in guard.journal.events(proposal.intent_id)]
    assert statuses == ["proposed", "executing", "succeeded"]


def test_default_preview_shows_the_intent(guard: IntentGuard) -> None:
    assert guard.propose(INTENT).preview == {"would_run": INTENT.as_dict()}


@pytest.mark.parametrize(
    "changed",
    [
        Intent("acme", "repo__comment", "42", {"issue": 42, "body": "Fixed in #44"}),
        Intent("other-account", "repo__comment", "42", dict(INTENT.payload)),
        Intent("acme", "repo__comment", "43", dict(INTENT.payload)),
        Intent("acme", "repo__close", "42", dict(INTENT.payload)),
    ],
)
def test_code_runs_only_the_exact_previewed_intent(
    guard: IntentGuard, service: Service, changed: Intent
) -> None:
    proposal = guard.propose(INTENT)
    with pytest.raises(IntentMismatchError):
        guard.execute(proposal.code, changed, service.mutate)
    assert service.calls == 0
    assert guard.execute(proposal.code, INTENT, service.mutate).applied is True


def test_expired_code_runs_nothing(guard: IntentGuard, service: Service, clock: FakeClock) -> None:
    proposal = guard.propose(INTENT)
    clock.advance(120)
    with pytest.raises(ExpiredTokenError):
        guard.execute(proposal.code, INTENT, service.mutate)
    assert service.calls == 0


def test_duplicate_of_a_recent_intent_is_refused(
    guard: IntentGuard, service: Service, clock: FakeClock
) -> None:
    first = guard.propose(INTENT)
    guard.execute(first.code, INTENT, service.mutate)
    clock.advance(599)
    with pytest.raises(DuplicateIntentError, match="already succeeded 599 s ago") as info:
        guard.propose(INTENT)
    assert info.value.existing.intent_id == first.intent_id
    other = Intent("acme", "repo__comment", "42", {"issue": 42, "body": "another"})
    assert guard.propose(other).code  # a different intent is not a duplicate
    clock.advance(1)
    assert guard.propose(INTENT).code  # outside the window: allowed again
    assert service.calls == 1


def test_new_preview_supersedes_the_old_code(guard: IntentGuard, service: Service) -> None:
    old = guard.propose(INTENT)
    new = guard.propose(INTENT)
    assert new.superseded == (old.intent_id,)
    with pytest.raises(RevokedCodeError):
        guard.execute(old.code, INTENT, service.mutate)
    guard.execute(new.code, INTENT, service.mutate)
    assert service.calls == 1
    old_record = guard.record(old.intent_id)
    assert old_record is not None and old_record.status is IntentStatus.SUPERSEDED


def test_two_live_confirmations_of_one_intent_run_it_once(
    guard: IntentGuard, service: Service, clock: FakeClock
) -> None:
    """Two processes preview the same change at the same moment; both confirm."""
    first = guard.propose(INTENT)
    twin_id = "twin"
    code = guard.issuer.issue_code(INTENT.hash, ttl=120, data={"intent_id": twin_id})
    guard.journal.add(
        IntentRecord(
            twin_id, INTENT.hash, INTENT, IntentStatus.PROPOSED, clock(), clock(), code.code_id
        )
    )
    guard.execute(first.code, INTENT, service.mutate)
    with pytest.raises(DuplicateIntentError, match="succeeded meanwhile"):
        guard.execute(code.code, INTENT, service.mutate)
    assert service.calls == 1
    twin = guard.record(twin_id)
    assert twin is not None and twin.status is IntentStatus.REFUSED


def test_timeout_is_outcome_unknown_never_retried(guard: IntentGuard, service: Service) -> None:
    service.fail_with = TimeoutError("read timed out")
    seen: list[IntentRecord] = []
    proposal = guard.propose(INTENT)
    outcome = guard.execute(
        proposal.code, INTENT, service.mutate, reconcile=lambda rec: seen.append(rec)
    )
    assert outcome.status is IntentStatus.OUTCOME_UNKNOWN and outcome.applied is None
    assert service.calls == 1 and len(seen) == 1
    assert seen[0].status is IntentStatus.OUTCOME_UNKNOWN and seen[0].intent == INTENT
    assert "TimeoutError: read timed out" in (outcome.record.error or "")
    with pytest.raises(UnresolvedIntentError, match="outcome unknown"):
        guard.propose(INTENT)
    assert [r.intent_id for r in guard.unresolved()] == [proposal.intent_id]
    settled = guard.resolve(proposal.intent_id, applied=False, note="not in the service's log")
    assert settled.status is IntentStatus.NOT_APPLIED and settled.reconciled
    assert guard.unresolved() == []
    retry = guard.propose(INTENT)  # a deliberate retry: a new preview and a new code
    guard.execute(retry.code, INTENT, lambda: service.applied.append("retry"))
    assert service.calls == 1
    with pytest.raises(ValueError, match="cannot become"):
        guard.resolve(proposal.intent_id, applied=True)


@pytest.mark.parametrize(
    ("finding", "status"),
    [
        (True, IntentStatus.SUCCEEDED),
        (Reconciliation(True, {"comment_id": 7}, ("comment/7",)), IntentStatus.SUCCEEDED),
        (False, IntentStatus.NOT_APPLIED),
        (None, IntentStatus.OUTCOME_UNKNOWN),
    ],
)
def test_reconciliation_hook_settles_the_outcome(
    guard: IntentGuard, service: Service, finding: Any, status: IntentStatus
) -> None:
    service.fail_with = OutcomeUnknownError("connection reset after send")
    proposal = guard.propose(INTENT)
    outcome = guard.execute(proposal.code, INTENT, service.mutate, reconcile=lambda rec: finding)
    assert outcome.status is status and service.calls == 1
    if status is IntentStatus.SUCCEEDED:
        assert outcome.record.reconciled
        with pytest.raises(DuplicateIntentError):
            guard.propose(INTENT)
    if isinstance(finding, Reconciliation):
        assert outcome.result == {"comment_id": 7}
        assert outcome.record.affected_ids == ("comment/7",)


def test_failing_reconcile_hook_leaves_it_unknown(
    guard: IntentGuard, service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    service.fail_with = TimeoutError()

    def broken(rec: IntentRecord) -> Reconciliation:
        raise RuntimeError("audit log down")

    proposal = guard.propose(INTENT)
    outcome = guard.execute(proposal.code, INTENT, service.mutate, reconcile=broken)
    assert outcome.status is IntentStatus.OUTCOME_UNKNOWN
    assert "reconcile hook failed" in caplog.text


def test_tool_specific_transport_errors(guard: IntentGuard, service: Service) -> None:
    class GatewayTimeout(Exception):
        pass

    service.fail_with = GatewayTimeout("504")
    proposal = guard.propose(INTENT)
    outcome = guard.execute(
        proposal.code, INTENT, service.mutate, transport_errors=(GatewayTimeout,)
    )
    assert outcome.status is IntentStatus.OUTCOME_UNKNOWN


def test_service_refusal_is_failed_and_may_be_tried_again(
    guard: IntentGuard, service: Service
) -> None:
    service.fail_with = PermissionError("403 not a maintainer")
    service.apply_before_failing = False
    proposal = guard.propose(INTENT)
    outcome = guard.execute(proposal.code, INTENT, service.mutate)
    assert outcome.status is IntentStatus.FAILED and outcome.applied is False
    assert "403" in (outcome.record.error or "")
    assert guard.propose(INTENT).code  # known not applied: a new attempt is allowed


def test_interrupt_mid_mutation_is_recorded_as_unknown(
    guard: IntentGuard, service: Service
) -> None:
    service.fail_with = KeyboardInterrupt()
    proposal = guard.propose(INTENT)
    with pytest.raises(KeyboardInterrupt):
        guard.execute(proposal.code, INTENT, service.mutate)
    record = guard.record(proposal.intent_id)
    assert record is not None and record.status is IntentStatus.OUTCOME_UNKNOWN


def test_preflight_refusal_records_nothing(guard: IntentGuard) -> None:
    def refuse() -> dict[str, Any]:
        raise PreflightError("issue 42 is locked", field="issue")

    with pytest.raises(PreflightError, match="locked") as info:
        guard.propose(INTENT, preflight=refuse)
    assert info.value.field == "issue"
    assert guard.journal.by_hash(INTENT.hash) == []


def test_non_json_payload_is_refused_before_anything(guard: IntentGuard) -> None:
    calls: list[int] = []
    bad = Intent("acme", "repo__comment", "42", {"when": object()})
    with pytest.raises(CanonicalJSONError, match=r"\$\.payload\.when"):
        guard.propose(bad, preflight=lambda: calls.append(1))
    assert calls == []


def test_async_two_phase(guard: IntentGuard) -> None:
    applied: list[str] = []

    async def preflight() -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"async": True}

    async def mutate() -> str:
        await asyncio.sleep(0)
        applied.append("x")
        return "done"

    async def flow() -> None:
        proposal = await guard.apropose(INTENT, preflight=preflight)
        assert proposal.preview == {"async": True}
        outcome = await guard.aexecute(proposal.code, INTENT, mutate)
        assert outcome.result == "done"

    asyncio.run(flow())
    assert applied == ["x"]


def test_async_timeout_and_cancellation_are_unknown(guard: IntentGuard) -> None:
    async def slow() -> None:
        await asyncio.sleep(10)

    async def timeout_flow() -> IntentStatus:
        proposal = await guard.apropose(INTENT)

        async def mutate() -> None:
            await asyncio.wait_for(slow(), timeout=0.001)

        outcome = await guard.aexecute(
            proposal.code, INTENT, mutate, reconcile=lambda rec: Reconciliation(False)
        )
        return outcome.status

    assert asyncio.run(timeout_flow()) is IntentStatus.NOT_APPLIED

    other = Intent("acme", "repo__comment", "42", {"issue": 42, "body": "second"})

    async def cancel_flow() -> str:
        proposal = await guard.apropose(other)
        task = asyncio.ensure_future(guard.aexecute(proposal.code, other, slow))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return proposal.intent_id

    intent_id = asyncio.run(cancel_flow())
    record = guard.record(intent_id)
    assert record is not None and record.status is IntentStatus.OUTCOME_UNKNOWN


def test_sqlite_journal_survives_a_restart(
    tmp_path: Path, clock: FakeClock, service: Service
) -> None:
    path = tmp_path / "safety.db"

    def fresh_guard() -> IntentGuard:
        issuer = TokenIssuer(SECRET, store=SqliteTokenStore(path), clock=clock)
        return IntentGuard(issuer, SqliteIntentJournal(path))

    proposal = fresh_guard().propose(INTENT)
    outcome = fresh_guard().execute(proposal.code, INTENT, service.mutate)  # "after a restart"
    assert outcome.applied is True
    with pytest.raises(DuplicateIntentError):
        fresh_guard().propose(INTENT)
    conn = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM safety_intent_events")
    conn.close()
    assert fresh_guard().journal.by_correlation("none") == []


def test_guard_settings_are_checked() -> None:
    issuer = TokenIssuer(SECRET)
    with pytest.raises(ValueError, match="code_ttl"):
        IntentGuard(issuer, code_ttl=0)
    with pytest.raises(ValueError, match="duplicate_window"):
        IntentGuard(issuer, duplicate_window=-1)


def test_refused_preview_leaves_the_live_code_alone(guard: IntentGuard, service: Service) -> None:
    live = guard.propose(INTENT)

    def refuse() -> dict[str, Any]:
        raise PreflightError("tracker in maintenance")

    with pytest.raises(PreflightError):
        guard.propose(INTENT, preflight=refuse)
    assert guard.execute(live.code, INTENT, service.mutate).applied is True


def test_broken_affected_hook_still_records_the_change(
    guard: IntentGuard, service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    proposal = guard.propose(INTENT)

    def broken(result: Any) -> list[str]:
        raise KeyError("id")

    outcome = guard.execute(proposal.code, INTENT, service.mutate, affected=broken)
    assert outcome.status is IntentStatus.SUCCEEDED and outcome.record.affected_ids == ()
    assert "affected-ids hook failed" in caplog.text
    with pytest.raises(DuplicateIntentError):
        guard.propose(INTENT)
