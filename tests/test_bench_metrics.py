"""recall@k, hit@k and percentiles on hand-made answers."""

from __future__ import annotations

import pytest

from attention_scoping_lab.bench.metrics import hit, mean, percentile, recall


def test_recall_is_the_share_of_gold_tools_exposed() -> None:
    assert recall(["a", "b", "c"], ["a"]) == 1.0
    assert recall(["a", "x"], ["a", "b"]) == 0.5
    assert recall([], ["a", "b", "c"]) == 0.0
    assert recall(["b", "c"], ["a", "b", "c"]) == pytest.approx(2 / 3)
    assert recall(["a"], ["a", "a"]) == 1.0  # a gold tool listed twice counts once


def test_recall_needs_gold_tools() -> None:
    with pytest.raises(ValueError, match="at least one gold tool"):
        recall(["a"], [])


def test_hit_needs_one_gold_tool() -> None:
    assert hit(["x", "b"], ["a", "b"]) == 1.0
    assert hit(["x"], ["a", "b"]) == 0.0


def test_averages_over_queries() -> None:
    exposed = [["a"], ["a", "b"], ["c"]]
    gold = [["a"], ["a", "c"], ["a"]]
    assert mean(recall(e, g) for e, g in zip(exposed, gold, strict=True)) == pytest.approx(0.5)
    assert mean(hit(e, g) for e, g in zip(exposed, gold, strict=True)) == pytest.approx(2 / 3)
    assert mean([]) == 0.0


def test_percentiles_interpolate_like_numpy() -> None:
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 5.0
    assert percentile(values, 95) == pytest.approx(4.8)
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) == 0.0
    with pytest.raises(ValueError):
        percentile(values, 101)
