"""The safe-mutation example: coordinator -> ledger -> manifest-bound worker -> receipts."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from attention_scoping.ledger import TaskStatus
from attention_scoping.safety import IntentStatus
from attention_scoping.testing import ScriptedChatModel
from examples import safe_mutation as demo


def test_demo_runs_offline(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert demo.main(["--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "scripted models stand in" in out
    assert "reconciliation found it applied" in out and "duplicate_intent" in out
    assert (tmp_path / "ledger.db").exists() and (tmp_path / "safety.db").exists()


def test_coordinator_sees_receipts_only(tmp_path: Path) -> None:
    lines: list[str] = []
    coordinator_model = ScriptedChatModel(policy=demo.coordinator_policy)
    worker_model = ScriptedChatModel(policy=demo.worker_policy)
    system = demo.build_system(
        tmp_path, coordinator_model=coordinator_model, worker_model=worker_model, log=lines.append
    )
    result = demo.run(system, "Triage issues 1 and 2.")

    # The world changed exactly twice: the timed-out comment was reconciled, not re-posted,
    # and the duplicate task was refused.
    assert system.tracker.writes == ["label issue 1 'bug'", "comment on issue 2"]
    assert system.tracker.issues[2]["comments"] == ["Reproduced on staging; fix in progress."]

    label, comment, duplicate = system.ledger.receipts()
    assert (label.status, label.affected_ids) == (TaskStatus.COMPLETED, ("issue/1",))
    assert (comment.status, comment.affected_ids) == (TaskStatus.COMPLETED, ("issue/2",))
    assert duplicate.status is TaskStatus.FAILED and "duplicate_intent" in (duplicate.error or "")
    final_text = system.transcripts[label.task_id][-1].text
    assert label.content_sha256 == hashlib.sha256(final_text.encode()).hexdigest()

    # What the coordinator model was ever shown: its prompt, the user, its own calls, receipts.
    shown = " ".join(
        str(m.content) + str(getattr(m, "tool_calls", ""))
        for call in coordinator_model.recorded
        for m in call["messages"]
    )
    assert "content_sha256" in shown and label.content_sha256 in shown
    for worker_detail in ("confirmation_code", "repo__", "preview", "labels_before", final_text):
        assert worker_detail not in shown
    assert coordinator_model.recorded[0]["tools"] == ["post_tasks", "await_receipts"]
    assert "All three tasks are settled" in result["messages"][-1].text
    assert "failed (WorkNotDone: duplicate_intent)" in result["messages"][-1].text

    # The worker saw its manifest only, and wrote through the two-phase path.
    assert {tuple(c["tools"]) for c in worker_model.recorded} == {
        ("repo__get_issue", "repo__add_label", "repo__comment")
    }
    confirmations = [
        c
        for m in system.transcripts[comment.task_id]
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if "confirmation_code" in c["args"]
    ]
    assert len(confirmations) == 1
    settled = [
        system.guard.record(e["intent_id"])
        for e in system.guard.journal.events()
        if e["status"] == "succeeded"
    ]
    assert len(settled) == 2 and all(r is not None for r in settled)
    assert [r.reconciled for r in settled if r is not None] == [False, True]
    assert all(r.status is IntentStatus.SUCCEEDED for r in settled if r is not None)
