"""An exception whose `str()` raises still becomes a structured result (issue 25): in a two-phase
write (failed, or outcome unknown), through a manifest agent, in a gate precondition and in a
ledger worker's handler. Every place reads exceptions through `core.failures`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from attention_scoping.common.failures import UNREADABLE, exception_line, exception_text
from attention_scoping.gating.preconditions import unmet
from attention_scoping.ledger import Coordinator, SqliteLedger, Worker
from attention_scoping.safety import Intent, IntentGuard, IntentStatus, create_manifest_agent
from attention_scoping.testing import ScriptedChatModel
from tests.manifest_agent_support import bodies, two_phase
from tests.safety_support import FakeClock, Tracker, make_guard, repo_manifest


class Unprintable(Exception):
    """An exception whose message cannot be read."""

    def __str__(self) -> str:
        raise RuntimeError("no message for you")


INTENT_ARGS = {"issue": 1, "label": "bug"}


def test_exception_text_stands_in_for_a_message_that_cannot_be_read() -> None:
    assert exception_text(ValueError("bad city")) == "bad city"
    assert exception_text(Unprintable()) == UNREADABLE
    assert exception_line(Unprintable()) == f"Unprintable: {UNREADABLE}"
    assert exception_line(KeyError("k")) == "KeyError: 'k'"


@pytest.fixture
def guard() -> IntentGuard:
    return make_guard(FakeClock())


def _mutation_that_raises() -> Any:
    raise Unprintable


def test_a_failing_write_is_recorded_as_failed(guard: IntentGuard) -> None:
    intent = Intent("acme", "repo__add_label", "1", INTENT_ARGS)
    proposal = guard.propose(intent)
    outcome = guard.execute(proposal.code, intent, _mutation_that_raises)
    assert outcome.status is IntentStatus.FAILED and outcome.applied is False
    assert outcome.record.error == f"Unprintable: {UNREADABLE}"


@pytest.mark.parametrize("run", ["sync", "async"])
def test_a_lost_reply_with_an_unreadable_error_is_outcome_unknown(
    guard: IntentGuard, run: str
) -> None:
    intent = Intent("acme", "repo__add_label", "1", INTENT_ARGS)
    proposal = guard.propose(intent)
    options: dict[str, Any] = {"transport_errors": (Unprintable,)}
    if run == "sync":
        outcome = guard.execute(proposal.code, intent, _mutation_that_raises, **options)
    else:
        execute = guard.aexecute(proposal.code, intent, _mutation_that_raises, **options)
        outcome = asyncio.run(execute)
    assert outcome.status is IntentStatus.OUTCOME_UNKNOWN and outcome.applied is None
    assert outcome.record.error == f"Unprintable: {UNREADABLE}"
    assert [r.intent_id for r in guard.unresolved()] == [proposal.intent_id]


class BrokenTracker(Tracker):
    """A tracker whose label write fails with an exception that cannot be printed."""

    def add_label(self, issue: int, label: str) -> dict[str, Any]:
        raise Unprintable


def test_a_manifest_agent_answers_the_failed_write_with_a_structured_message(
    guard: IntentGuard,
) -> None:
    tracker = BrokenTracker()
    model = ScriptedChatModel(policy=two_phase("repo__add_label", INTENT_ARGS))
    agent = create_manifest_agent(model, [repo_manifest(tracker)], guard=guard)
    result = agent.invoke({"messages": [HumanMessage("label issue 1 as bug")]})
    (preview, executed) = bodies(result)
    assert preview[2]["status"] == "confirmation_required"
    assert executed[0] == "repo__add_label" and executed[1] == "error"
    assert executed[2]["error"] == "mutation_failed"
    assert f"Unprintable: {UNREADABLE}" in executed[2]["message"]
    assert executed[2]["next_step"]
    assert tracker.issues[1]["labels"] == []
    assert result["messages"][-1].content == "final: mutation_failed"


def test_a_precondition_that_raises_unreadably_hides_the_tool_with_a_reason() -> None:
    def logged_in(state: Any) -> bool:
        raise Unprintable

    reason = unmet(logged_in, {"user": "ada"})
    assert reason == f"precondition 'logged_in' raised Unprintable: {UNREADABLE}"


def test_a_worker_records_a_handler_failure_it_cannot_print(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db", max_attempts=1)
    task = Coordinator(ledger).post({"issue": 1})

    def handle(lease: Any) -> Any:
        raise Unprintable

    receipt = Worker(ledger, "w1", retry_errors=False).run_one(handle)
    assert receipt is not None and receipt.task_id == task
    assert receipt.status == "failed" and receipt.error == f"Unprintable: {UNREADABLE}"
