"""A write whose result JSON cannot hold (NaN, infinities, non-text keys, bytes...) still ends
its intent in a terminal state, with the result recorded in a tagged form, and the run goes on."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage

from attention_scoping.common.limits import RESULT_MAX_CHARS
from attention_scoping.safety import (
    Capability,
    CapabilityManifest,
    DuplicateIntentError,
    Intent,
    IntentGuard,
    IntentStatus,
    MemoryTokenStore,
    OutcomeUnknownError,
    SqliteIntentJournal,
    SqliteTokenStore,
    StoreUnavailableError,
    TokenIssuer,
    UnresolvedIntentError,
    create_manifest_agent,
)
from attention_scoping.safety.canonical import (
    SAFE_JSON,
    canonical_json,
    from_safe_json,
    to_safe_json,
)
from attention_scoping.storage.retry import RetryPolicy
from attention_scoping.testing import ScriptedChatModel
from tests.manifest_agent_support import bodies, two_phase
from tests.safety_support import SECRET, FakeClock, backend_guard

INTENT = Intent("acme", "metrics__recompute", "dashboard/7", {"dashboard": 7})


def odd_result() -> dict[str, Any]:
    """What a real service may hand back: a NaN score, an infinite rate, integer keys, bytes."""
    return {
        "score": math.nan,
        "rate": math.inf,
        "floor": -math.inf,
        "by_id": {1: "a"},
        "raw": b"\0",
    }


def assert_odd_result(value: Any) -> None:
    assert math.isnan(value["score"]) and value["rate"] == math.inf and value["floor"] == -math.inf
    assert value["by_id"] == {1: "a"} and value["raw"] == b"\0"


@pytest.fixture(params=["memory", "sqlite"])
def guard(request: pytest.FixtureRequest, tmp_path: Path) -> IntentGuard:
    return backend_guard(request.param, tmp_path, FakeClock())


def test_a_nan_result_ends_the_intent_succeeded_with_a_tagged_result(guard: IntentGuard) -> None:
    proposal = guard.propose(INTENT)
    outcome = guard.execute(proposal.code, INTENT, odd_result)
    assert outcome.status is IntentStatus.SUCCEEDED and outcome.applied is True
    record = guard.record(proposal.intent_id)
    assert record is not None and record.status is IntentStatus.SUCCEEDED  # not `executing`
    assert record.result_encoding == SAFE_JSON
    assert record.result["$object"]["score"] == {"$float": "NaN"}
    assert record.result_sha256 and canonical_json(record.result)  # strict JSON, hashable
    assert_odd_result(from_safe_json(record.result))  # nothing lost
    assert [e["status"] for e in guard.journal.events(proposal.intent_id)][-1] == "succeeded"
    with pytest.raises(DuplicateIntentError):  # settled, so a repeat is a duplicate, not stuck
        guard.propose(INTENT)


def test_plain_results_are_recorded_as_before(guard: IntentGuard) -> None:
    proposal = guard.propose(INTENT)
    outcome = guard.execute(proposal.code, INTENT, lambda: {"rows": (1, 2.0), "ok": True})
    assert outcome.result == {"rows": [1, 2.0], "ok": True}
    assert outcome.record.result_encoding is None


def test_async_and_reconciled_results_are_recorded_safely(guard: IntentGuard) -> None:
    async def recompute() -> dict[str, Any]:
        return odd_result()

    async def scenario() -> None:
        proposal = await guard.apropose(INTENT)
        outcome = await guard.aexecute(proposal.code, INTENT, recompute)
        assert outcome.status is IntentStatus.SUCCEEDED
        assert_odd_result(from_safe_json(outcome.result))

    asyncio.run(scenario())

    other = Intent("acme", "metrics__recompute", "dashboard/8", {"dashboard": 8})
    proposal = guard.propose(other)

    def lost_reply() -> None:
        raise OutcomeUnknownError("no answer")

    found = guard.execute(
        proposal.code, other, lost_reply, reconcile=lambda rec: _applied_with(odd_result())
    )
    assert found.status is IntentStatus.SUCCEEDED and found.record.reconciled
    assert found.record.result_encoding == SAFE_JSON
    assert_odd_result(from_safe_json(found.result))


def _applied_with(result: Any) -> Any:
    from attention_scoping.safety import Reconciliation

    return Reconciliation(applied=True, result=result)


def test_safe_json_round_trips_what_canonical_json_refuses() -> None:
    cycle: list[Any] = [1]
    cycle.append(cycle)
    for value in [
        [math.inf, {"x": -math.inf}],
        {1: "a", (2, 3): {"$float": "not a tag"}},  # data that looks like a tag stays data
        [math.nan, {frozenset({1}), 2}, b"\xff"],
    ]:
        stored, encoding = to_safe_json(value)
        assert encoding == SAFE_JSON
        canonical_json(stored)  # always strict, canonical JSON
        back = from_safe_json(stored)
        assert repr(back) == repr(value)  # NaN != NaN: compare what they print
    stored, encoding = to_safe_json({"$float": "NaN", "n": math.nan})
    back = from_safe_json(stored)
    assert back["$float"] == "NaN" and math.isnan(back["n"])
    stored, encoding = to_safe_json(cycle)
    assert encoding == SAFE_JSON and stored == [1, {"$cycle": "list"}]
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    stored, encoding = to_safe_json({"deep": deep, "n": math.nan})
    assert encoding == SAFE_JSON and "too deeply nested" in stored["$str"]


def test_an_agent_run_goes_on_after_a_nan_result() -> None:
    done: list[int] = []

    def recompute(dashboard: int) -> dict[str, Any]:
        done.append(dashboard)
        return {"dashboard": dashboard, "score": math.nan}

    manifest = metrics_manifest(recompute)
    guard = IntentGuard(TokenIssuer(SECRET, store=MemoryTokenStore()))
    model = ScriptedChatModel(policy=two_phase("metrics__recompute", {"dashboard": 7}))
    agent = create_manifest_agent(model, [manifest], guard=guard)
    result = agent.invoke({"messages": [HumanMessage("recompute dashboard 7")]})
    (_, executed) = bodies(result)
    assert executed[1] == "success" and executed[2]["status"] == "executed"
    assert executed[2]["result"] == {"$object": {"dashboard": 7, "score": {"$float": "NaN"}}}
    assert executed[2]["result_encoding"] == SAFE_JSON
    tm = [m for m in result["messages"] if isinstance(m, ToolMessage)][-1]
    json.loads(str(tm.content), parse_constant=_refuse)  # strict JSON for any provider
    assert result["messages"][-1].content == "final: executed" and done == [7]
    record = guard.record(tm.artifact["intent"]["intent_id"])
    assert record is not None and record.status is IntentStatus.SUCCEEDED


def metrics_manifest(recompute: Any) -> CapabilityManifest:
    """A `metrics` namespace with one write tool."""
    return CapabilityManifest(
        "metrics",
        [
            Capability(
                "recompute",
                "Recompute a dashboard's score.",
                {
                    "type": "object",
                    "properties": {"dashboard": {"type": "integer"}},
                    "required": ["dashboard"],
                },
                recompute,
                write=True,
                target="dashboard",
            )
        ],
    )


def _refuse(token: str) -> Any:
    raise AssertionError(f"{token} is not JSON")


def test_a_journal_from_before_result_encodings_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.execute(
        """CREATE TABLE safety_intents (
        intent_id TEXT PRIMARY KEY, intent_hash TEXT NOT NULL, intent TEXT NOT NULL,
        status TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
        code_id TEXT, code_expires_at REAL, preview TEXT, result TEXT, result_sha256 TEXT,
        affected_ids TEXT NOT NULL DEFAULT '[]', error TEXT, correlation TEXT,
        reconciled INTEGER NOT NULL DEFAULT 0)"""
    )
    old.commit()
    old.close()
    guard = IntentGuard(
        TokenIssuer(SECRET, store=SqliteTokenStore(path)), SqliteIntentJournal(path)
    )
    proposal = guard.propose(INTENT)
    assert guard.execute(proposal.code, INTENT, odd_result).record.result_encoding == SAFE_JSON
    again = SqliteIntentJournal(path).get(proposal.intent_id)
    assert again is not None and again.result_encoding == SAFE_JSON


def test_the_outcome_is_recorded_through_a_lock_held_during_the_mutation(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    holder = sqlite3.connect(path, isolation_level=None)
    released: list[float] = []

    def release(seconds: float) -> None:
        if not released:
            released.append(seconds)
            holder.execute("COMMIT")

    journal = SqliteIntentJournal(path, retry=RetryPolicy(base=0.001, cap=0.01, sleep=release))
    guard = IntentGuard(TokenIssuer(SECRET, store=SqliteTokenStore(path)), journal)
    journal.db.busy_timeout = 0.01
    journal.db.reset()
    proposal = guard.propose(INTENT)

    def mutate() -> dict[str, Any]:
        holder.execute("BEGIN IMMEDIATE")  # another process writes while the change runs
        return odd_result()

    outcome = guard.execute(proposal.code, INTENT, mutate)
    assert released, "the journal never met the lock"
    assert outcome.status is IntentStatus.SUCCEEDED
    record = SqliteIntentJournal(path).get(proposal.intent_id)
    assert record is not None and record.status is IntentStatus.SUCCEEDED
    holder.close()


def test_an_outcome_whose_commit_reply_was_lost_is_recorded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.db"
    journal = SqliteIntentJournal(path, retry=RetryPolicy(base=0.001, cap=0.01))
    guard = IntentGuard(TokenIssuer(SECRET, store=SqliteTokenStore(path)), journal)
    proposal = guard.propose(INTENT)
    original = journal.db.write
    lost: list[bool] = []

    @contextmanager
    def lossy() -> Iterator[sqlite3.Connection]:
        with original() as conn:
            yield conn
        if not lost:  # the outcome committed, then the answer was lost
            lost.append(True)
            raise sqlite3.OperationalError("disk I/O error")

    def mutate() -> dict[str, Any]:
        monkeypatch.setattr(journal.db, "write", lossy)
        return {"done": True}

    outcome = guard.execute(proposal.code, INTENT, mutate)
    assert lost and outcome.status is IntentStatus.SUCCEEDED
    statuses = [e["status"] for e in journal.events(proposal.intent_id)]
    assert statuses.count(IntentStatus.SUCCEEDED.value) == 1  # the retry did not write it again
    kept = SqliteIntentJournal(path).get(proposal.intent_id)
    assert kept is not None and kept.status is IntentStatus.SUCCEEDED


class Locked:
    """SQLite safety stores with a short lock wait, and another process that can hold the lock."""

    def __init__(self, path: Path) -> None:
        once = RetryPolicy(base=0.001, cap=0.01, max_attempts=1)
        self.store = SqliteTokenStore(path, retry=once)
        self.journal = SqliteIntentJournal(path, retry=once)
        for db in (self.store.db, self.journal.db):
            db.busy_timeout = 0.01
            db.reset()
        self.guard = IntentGuard(TokenIssuer(SECRET, store=self.store), self.journal)
        self.holder = sqlite3.connect(path, isolation_level=None)

    def hold(self) -> None:
        self.holder.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.holder.in_transaction:
            self.holder.execute("COMMIT")


def test_an_applied_change_is_reported_even_if_the_journal_stays_locked(tmp_path: Path) -> None:
    stores = Locked(tmp_path / "s.db")
    proposal = stores.guard.propose(INTENT)

    def mutate() -> dict[str, Any]:
        stores.hold()  # from now on the journal cannot record anything
        return {"done": True}

    outcome = stores.guard.execute(proposal.code, INTENT, mutate)
    assert outcome.status is IntentStatus.SUCCEEDED and outcome.result == {"done": True}
    stores.release()
    kept = stores.journal.get(proposal.intent_id)
    assert kept is not None and kept.status is IntentStatus.EXECUTING  # left for reconciliation
    assert [r.intent_id for r in stores.guard.unresolved(stale_after=-1)] == [proposal.intent_id]
    with pytest.raises(UnresolvedIntentError):  # an identical call stays blocked meanwhile
        stores.guard.propose(INTENT)


def test_a_store_locked_before_the_change_refuses_and_runs_nothing(tmp_path: Path) -> None:
    stores = Locked(tmp_path / "s.db")
    proposal = stores.guard.propose(INTENT)
    ran: list[int] = []
    stores.hold()
    with pytest.raises(StoreUnavailableError, match="not made"):
        stores.guard.execute(proposal.code, INTENT, lambda: ran.append(1))
    stores.release()
    assert ran == []


def test_an_agent_run_goes_on_when_the_store_is_locked_at_confirmation(tmp_path: Path) -> None:
    stores = Locked(tmp_path / "s.db")
    done: list[int] = []

    def recompute(dashboard: int) -> dict[str, Any]:
        done.append(dashboard)
        return {"dashboard": dashboard}

    preview_then_lock = two_phase("metrics__recompute", {"dashboard": 7})

    def policy(messages: list[Any], tools: list[str]) -> Any:
        answer = preview_then_lock(messages, tools)
        if answer.tool_calls and "confirmation_code" in answer.tool_calls[0]["args"]:
            stores.hold()  # another process takes the lock between preview and confirmation
        return answer

    model = ScriptedChatModel(policy=policy)
    agent = create_manifest_agent(model, [metrics_manifest(recompute)], guard=stores.guard)
    result = agent.invoke({"messages": [HumanMessage("recompute dashboard 7")]})
    stores.release()
    (_, refused) = bodies(result)
    assert refused[1] == "error" and refused[2]["error"] == "intent_refused"
    assert "store is unavailable" in refused[2]["message"] and done == []
    assert result["messages"][-1].content == "final: intent_refused"


@pytest.mark.parametrize("shape", ["text", "object"])
def test_a_huge_write_result_is_cut_in_its_result_field_and_stays_json(shape: str) -> None:
    """The bound cuts only `result` of the executed payload: the message is valid JSON within
    `RESULT_MAX_CHARS`, every other field whole, the cut marked with the full size."""
    line = 'row "quoted" \\ and a newline\n'  # escapes make the JSON longer than the text
    big = line * 10_000

    def recompute(dashboard: int) -> Any:
        return big if shape == "text" else {"dashboard": dashboard, "rows": big}

    guard = IntentGuard(TokenIssuer(SECRET, store=MemoryTokenStore()))
    model = ScriptedChatModel(policy=two_phase("metrics__recompute", {"dashboard": 7}))
    agent = create_manifest_agent(model, [metrics_manifest(recompute)], guard=guard)
    result = agent.invoke({"messages": [HumanMessage("recompute dashboard 7")]})
    tm = [m for m in result["messages"] if isinstance(m, ToolMessage)][-1]
    assert len(tm.text) <= RESULT_MAX_CHARS
    body = json.loads(tm.text)  # still JSON: the cut is inside the field, not across the payload
    assert body["status"] == "executed" and body["tool"] == "metrics__recompute"
    assert body["next_step"].startswith("The change is applied.")
    whole = (
        big
        if shape == "text"
        else json.dumps({"dashboard": 7, "rows": big}, ensure_ascii=False, separators=(", ", ": "))
    )
    assert isinstance(body["result"], str) and f"cut: {len(whole):,} characters" in body["result"]
    shown = body["result"].split("\n[... cut:")[0]
    assert whole.startswith(shown) and len(shown) > RESULT_MAX_CHARS // 2
    assert result["messages"][-1].content == "final: executed"
