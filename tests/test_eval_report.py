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


def _kinds() -> EvalResult:
    """Two strategies over tasks of every kind: `eager` passes the no-tool messages, `scoped`
    the tool tasks."""
    rows = []
    for strategy, wins in (("eager", {"no-tool"}), ("scoped", {"tool", "switch"})):
        for i, kind in enumerate(["tool", "tool", "no-tool", "no-tool", "switch", "two-tools"]):
            rows.append(TaskResult(strategy, f"t{i}", "m", success=kind in wins, kind=kind))
    return EvalResult("s", "m", "http://x", ["eager", "scoped"], rows)


def test_success_is_split_by_kind_of_task(tmp_path: Path) -> None:
    result = _kinds()
    eager, scoped = result.by_strategy()
    assert eager.tasks_by_kind == {"tool": 2, "no-tool": 2, "switch": 1, "two-tools": 1}
    assert eager.success_by_kind == {"tool": 0.0, "no-tool": 1.0, "switch": 0.0, "two-tools": 0.0}
    assert scoped.success_by_kind["tool"] == 1.0 and scoped.success_by_kind["no-tool"] == 0.0
    console = Console(record=True, width=200)
    render(result, console, {"eager": 0, "scoped": 2})
    text = console.export_text()
    assert "success by kind of task" in text
    header = next(line for line in text.splitlines() if "no tool needed" in line)
    assert all(h in header for h in ("all", "tool needed", "topic switch", "two tools"))
    rows = [line for line in text.splitlines() if line.strip().startswith(("│ eager", "│ scoped"))]
    eager_kinds, scoped_kinds = rows[-2:]  # the second table's rows
    assert "100 % (2/2)" in eager_kinds and "33 % (2/6)" in eager_kinds
    assert scoped_kinds.rstrip(" │").endswith("2")  # its unrequested writes
    write_json(result, tmp_path / "e.json", {"eager": 0, "scoped": 2})
    data = json.loads((tmp_path / "e.json").read_text())
    assert data["strategies"][0]["success_by_kind"]["no-tool"] == 1.0
    assert data["strategies"][1]["tasks_by_kind"]["switch"] == 1
    assert data["unrequested_write_calls"] == {"eager": 0, "scoped": 2}
    assert data["tasks"][2]["kind"] == "no-tool"


def test_results_without_kinds_show_no_kind_table() -> None:
    console = Console(record=True, width=200)
    render(_two_strategies(), console)
    assert "success by kind" not in console.export_text()
