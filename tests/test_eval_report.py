"""The eval's time figures: per task, and per task on the work every strategy completed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from attention_scoping_lab.eval.report import render, write_json
from attention_scoping_lab.eval.results import EvalResult, TaskResult, figures


def _done(strategy: str, task: str, seconds: tuple[float, ...], success: bool = True) -> TaskResult:
    return TaskResult(strategy, task, "m", success=success, call_seconds=seconds)


def _two_strategies() -> EvalResult:
    """`fast` fails one task in one short call; `slow` does it in three; both do task a."""
    return EvalResult(
        suite="s",
        model="m",
        base_url="http://x",
        strategies=["fast", "slow"],
        results=[
            _done("fast", "a", (4.0, 2.0)),
            _done("fast", "b", (1.0,), success=False),
            _done("slow", "a", (3.0, 2.0)),
            _done("slow", "b", (5.0, 4.0, 3.0)),
        ],
    )


def test_time_per_task_sums_each_tasks_calls() -> None:
    row = figures("fast", _two_strategies().results[:2])
    assert row.seconds_per_task == pytest.approx((6.0 + 1.0) / 2)
    assert row.seconds_per_call == pytest.approx(7.0 / 3)
    assert row.seconds_per_shared_task is None  # nothing to compare with


def test_shared_time_counts_only_tasks_every_strategy_completed() -> None:
    result = _two_strategies()
    assert result.shared_tasks() == frozenset({"a"})
    fast, slow = result.by_strategy()
    # On all tasks the strategy that gave up looks faster; on the same work it is slower.
    assert fast.seconds_per_task < slow.seconds_per_task
    assert fast.seconds_per_shared_task == pytest.approx(6.0)
    assert slow.seconds_per_shared_task == pytest.approx(5.0)


def test_no_shared_time_without_a_task_both_completed() -> None:
    result = _two_strategies()
    result.results = [r for r in result.results if r.task == "b"]
    assert result.shared_tasks() == frozenset()
    assert [f.seconds_per_shared_task for f in result.by_strategy()] == [None, None]


def test_a_strategy_that_did_not_run_is_not_compared() -> None:
    result = _two_strategies()
    result.strategies.append("never-ran")
    assert result.shared_tasks() == frozenset({"a"})
    assert [f.strategy for f in result.by_strategy()] == ["fast", "slow"]


def test_table_and_json_show_both_times(tmp_path: Path) -> None:
    result = _two_strategies()
    console = Console(record=True, width=200)
    render(result, console)
    text = console.export_text()
    fast_row = next(line for line in text.splitlines() if "fast" in line)
    assert "3.5" in fast_row and "6.0" in fast_row
    assert "over the 1 tasks every strategy here completed" in text
    write_json(result, tmp_path / "eval.json")
    data = json.loads((tmp_path / "eval.json").read_text())
    assert data["shared_tasks"] == ["a"]
    assert [s["seconds_per_shared_task"] for s in data["strategies"]] == [6.0, 5.0]


def test_one_strategy_shows_no_shared_time() -> None:
    result = _two_strategies()
    result.strategies = ["slow"]
    console = Console(record=True, width=200)
    render(result, console)
    text = console.export_text()
    slow_row = next(line for line in text.splitlines() if "slow" in line)
    assert "8.5" in slow_row and " - " in slow_row
    assert "every strategy here completed" not in text
