"""Benchmark harness: selection quality, tokens per call and latency of the gate on labelled
catalogs (`attention-scoping bench`), and the paper's simulated 120-tool benchmark
(`attention-scoping simulate`).

Importing this package needs only the core dependencies; the gate methods need the `gate` extra
and `--plot` needs matplotlib (the `bench` extra).
"""

from attention_scoping.bench.methods import METHODS, MethodSpec, resolve_methods
from attention_scoping.bench.metrics import hit, mean, percentile, recall
from attention_scoping.bench.runner import DEFAULT_KS, BenchResult, MethodResult, run_bench

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
