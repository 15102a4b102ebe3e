"""Benchmark harness: selection quality, tokens per call and latency of the gate on labelled
catalogs (`attention-scoping bench`), and the paper's simulated 120-tool benchmark
(`attention-scoping simulate`).

Importing this package needs only the core dependencies; the gate methods need the `gate` extra
and `--plot` needs matplotlib (the `bench` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping_lab.bench.methods import METHODS, MethodSpec, resolve_methods
    from attention_scoping_lab.bench.metrics import hit, mean, percentile, recall
    from attention_scoping_lab.bench.runner import (
        DEFAULT_KS,
        BenchResult,
        MethodResult,
        run_bench,
    )

_EXPORTS = {
    "DEFAULT_KS": "runner",
    "METHODS": "methods",
    "BenchResult": "runner",
    "hit": "metrics",
    "mean": "metrics",
    "MethodResult": "runner",
    "MethodSpec": "methods",
    "percentile": "metrics",
    "recall": "metrics",
    "resolve_methods": "methods",
    "run_bench": "runner",
}

__all__ = [
    "DEFAULT_KS",
    "METHODS",
    "BenchResult",
    "MethodResult",
    "MethodSpec",
    "hit",
    "mean",
    "percentile",
    "recall",
    "resolve_methods",
    "run_bench",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
