"""Selection metrics: recall@k and hit@k as the data README defines them, and latency summaries.

- recall@k: the share of a query's gold tools among the tools exposed at k, averaged over queries.
- hit@k: the share of queries with at least one gold tool among the tools exposed at k.

Pure functions over plain collections, so they are tested on hand-made answers.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence


def recall(exposed: Collection[str], gold: Sequence[str]) -> float:
    """Share of `gold` found in `exposed` (1.0 when every gold tool was exposed).

    Raises:
        ValueError: `gold` is empty (a query without gold tools cannot be scored).
    """
    if not gold:
        msg = "a query needs at least one gold tool to be scored"
        raise ValueError(msg)
    found = set(exposed)
    return sum(1 for g in set(gold) if g in found) / len(set(gold))


def hit(exposed: Collection[str], gold: Sequence[str]) -> float:
    """1.0 when at least one gold tool was exposed, else 0.0."""
    found = set(exposed)
    return 1.0 if any(g in found for g in gold) else 0.0


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean (0.0 for no values, so empty runs report zeros, not errors)."""
    items = list(values)
    return math.fsum(items) / len(items) if items else 0.0


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between ranks (numpy's default).

    Raises:
        ValueError: `q` outside [0, 100].
    """
    if not 0.0 <= q <= 100.0:
        msg = f"percentile must be within [0, 100], not {q}"
        raise ValueError(msg)
    items = sorted(values)
    if not items:
        return 0.0
    position = (len(items) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(items) - 1)
    return items[low] + (items[high] - items[low]) * (position - low)
