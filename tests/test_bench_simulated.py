"""The simulated 120-tool benchmark: the paper's token profile, the task mix, determinism."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from attention_scoping.common.tokens import get_counter
from attention_scoping_lab.catalog import load_catalog, load_queries
from attention_scoping_lab.simulate import build_catalog, build_tasks, export, run_simulation
from attention_scoping_lab.simulate.catalog import PAPER_PROFILE


def test_catalog_matches_the_paper_profile() -> None:
    counter = get_counter()
    specs = build_catalog(0, counter)
    assert len(specs) == 120 and len({s.id for s in specs}) == 120
    for server, (count, mean) in PAPER_PROFILE.items():
        sizes = [
            counter.count(json.dumps(s.provider_schema(), ensure_ascii=False))
            for s in specs
            if s.server == server
        ]
        assert len(sizes) == count
        assert statistics.fmean(sizes) == pytest.approx(mean, rel=0.05), server


def test_catalog_and_tasks_are_deterministic() -> None:
    first, again = build_catalog(3), build_catalog(3)
    assert [(s.id, s.description, s.parameters) for s in first] == [
        (s.id, s.description, s.parameters) for s in again
    ]
    assert build_tasks(3, 50) == build_tasks(3, 50)
    assert build_tasks(3, 50) != build_tasks(4, 50)


def test_task_mix() -> None:
    tasks = build_tasks(0, 500)
    kinds = {k: sum(1 for t in tasks if t.kind == k) for k in ("single", "multi", "session")}
    assert kinds == {"single": 200, "multi": 200, "session": 100}
    names = {s.name for s in build_catalog(0)}
    for task in tasks:
        if task.kind == "session":
            assert 15 <= len(task.turns) <= 40
        elif task.kind == "multi":
            assert 2 <= len(task.turns[0].tools) <= 4
        assert all(t in names for turn in task.turns for t in turn.tools)


def test_a_small_run_orders_the_strategies(tmp_path: Path) -> None:
    result = run_simulation(seed=0, n_tasks=10, ranker="bm25")
    by = {s.name: s for s in result.strategies}
    assert set(by) == {"eager", "scoped", "gated", "gated, no pool", "gateway"}
    eager = by["eager"]
    assert eager.tool_tokens_per_call == result.eager_tokens_per_call
    assert (
        by["gated"].tool_tokens_per_call
        < by["scoped"].tool_tokens_per_call
        < eager.tool_tokens_per_call
    )
    assert by["gateway"].calls_per_turn > eager.calls_per_turn  # search + schema + execute
    assert by["scoped"].counters["scope switches"] >= 1
    catalog, queries = export(result, tmp_path)
    specs = load_catalog(catalog)
    assert len(specs) == 120
    loaded = load_queries(queries, specs)
    assert len(loaded) == 8  # the single- and multi-step tasks of the first ten
    assert any(s.preconditions for s in specs)
