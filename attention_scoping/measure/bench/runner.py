"""Run the gate methods over labelled queries: recall@k, hit@k, tokens per call and latency.

One gate run per distinct decision configuration. For each query the gate decides at its
nominal k (the shipped k when it is among the reported ones): that call is timed and is the
selection latency, query embedding included. The same gate then decides at every other k (the
query vector is memoized by the ranker, so those calls are cheap and are not timed).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from attention_scoping.core.catalog import Query
from attention_scoping.core.tokens import TokenCounter, get_counter
from attention_scoping.core.tool import ToolSpec
from attention_scoping.measure.bench.methods import MethodSpec, build_gate, gate_specs
from attention_scoping.measure.bench.metrics import hit, mean, percentile, recall
from attention_scoping.measure.bench.vectors import Progress, warm_vectors
from attention_scoping.measure.tax import summary_pool_tokens

DEFAULT_KS = (1, 3, 5, 10, 20)
"""The k values reported by default."""

NOMINAL_K = 5
"""The k whose decision is timed (the shipped default), when it is among the reported ks."""

WARM_UP = 3
"""Untimed decisions before timing starts (an ONNX session's first runs are slow)."""


@dataclass
class MethodResult:
    """Figures of one method; maps are keyed by k."""

    spec: MethodSpec
    ranker: str
    recall: dict[int, float]
    hit: dict[int, float]
    tokens_per_call: dict[int, float]
    tools_per_call: dict[int, float]
    latency_ms: list[float]
    build_s: float
    embedded: int
    shares_decisions_with: str | None = None
    note: str = ""

    @property
    def latency_ms_p50(self) -> float:
        """Median selection latency (one gate decision), in milliseconds."""
        return percentile(self.latency_ms, 50)

    @property
    def latency_ms_p95(self) -> float:
        """95th percentile of the selection latency, in milliseconds."""
        return percentile(self.latency_ms, 95)


@dataclass
class BenchResult:
    """Everything `bench` reports."""

    n_tools: int
    n_queries: int
    eager_tokens_per_call: int
    tokenizer: str
    ks: tuple[int, ...]
    methods: list[MethodResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """Methods that could not run, with the reason (e.g. an encoder not installed)."""
    renamed: bool = False
    """True when tool names collide and the gate was given ids as names."""


@dataclass
class _Run:
    """Decisions of one gate configuration: shown tools per k per query."""

    gate: Any
    shown: dict[int, list[tuple[str, ...]]]
    latency_ms: list[float]
    build_s: float
    embedded: int


def messages_of(query: Query) -> list[BaseMessage]:
    """The conversation a query stands for: its system message (if any) and the user turn."""
    out: list[BaseMessage] = []
    if query.system:
        out.append(SystemMessage(query.system))
    out.append(HumanMessage(query.query))
    return out


def _run_gate(
    method: MethodSpec,
    specs: Sequence[ToolSpec],
    queries: Sequence[Query],
    ks: Sequence[int],
    cache: Any,
    progress: Progress | None,
) -> _Run:
    nominal = NOMINAL_K if NOMINAL_K in ks else max(ks)
    gate = build_gate(method, specs, nominal, cache)
    embedded = warm_vectors(gate.index.ranker, specs, progress)
    started = time.perf_counter()
    gate.index.fit_catalog(specs)
    build_s = time.perf_counter() - started
    names = [s.name for s in specs]
    shown: dict[int, list[tuple[str, ...]]] = {k: [] for k in ks}
    latency: list[float] = []
    label = f"{method.name}: {len(queries):,} queries"
    others = [k for k in ks if k != nominal]
    for query in queries[:WARM_UP]:
        gate.decide_names(
            {**query.state, "messages": [HumanMessage(f"{query.query} (warm-up)")]}, names
        )
    for number, query in enumerate(queries):
        state: dict[str, Any] = {**query.state, "messages": messages_of(query)}
        gate.k = nominal
        started = time.perf_counter()
        decision = gate.decide_names(state, names)
        latency.append((time.perf_counter() - started) * 1000.0)
        shown[nominal].append(tuple(decision.shown))
        try:
            for k in others:
                gate.k = k
                shown[k].append(tuple(gate.decide_names(state, names).shown))
        finally:
            gate.k = nominal
        if progress is not None:
            progress(label, number + 1, len(queries))
    return _Run(gate, shown, latency, build_s, embedded)


class _Pricer:
    """Tokens of what one call carries, memoized (many queries expose the same tools)."""

    def __init__(
        self, specs: Sequence[ToolSpec], originals: Sequence[ToolSpec], counter: TokenCounter
    ):
        from attention_scoping.measure.tax import tools_json

        self._schemas = {g.name: o.provider_schema() for g, o in zip(specs, originals, strict=True)}
        self._tools_json = tools_json
        self._counter = counter
        self._memo: dict[tuple[str, ...], int] = {}

    def tools(self, shown: tuple[str, ...]) -> int:
        """Tokens of the tools array holding the full schemas of `shown`."""
        cached = self._memo.get(shown)
        if cached is None:
            schemas = [self._schemas[n] for n in shown if n in self._schemas]
            cached = self._counter.count(self._tools_json(schemas)) if schemas else 0
            self._memo[shown] = cached
        return cached


def _catalog_pool(specs: Sequence[ToolSpec]) -> int:
    """Tokens of the summary pool of every tool, as a gate with `summary_pool="catalog"` sends
    it (that gate is built here only for its pool)."""
    from attention_scoping.gating import ToolAttentionMiddleware

    gate = ToolAttentionMiddleware(ranker="bm25", summary_pool="catalog", emit_events=False)
    gate.index.fit_catalog(specs)
    return gate.pool([s.name for s in specs])[1]


def _summaries(specs: Mapping[str, ToolSpec], shown: tuple[str, ...], counter: TokenCounter) -> int:
    """Tokens of the shown tools as one-line summaries in the gate's pool format, no schema."""
    if not shown:
        return 0
    return summary_pool_tokens([(n, specs[n].summary) for n in shown], counter)


def run_bench(
    specs: Sequence[ToolSpec],
    queries: Sequence[Query],
    methods: Sequence[MethodSpec],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    counter: TokenCounter | None = None,
    cache: Any = None,
    progress: Progress | None = None,
) -> BenchResult:
    """Score every method over `queries` on the catalog `specs`.

    Args:
        specs: The catalog (ids unique).
        queries: Labelled queries whose gold ids are in `specs`.
        methods: Method specs (see `bench.methods`).
        ks: k values to report (the gate runs at the largest).
        counter: Tokenizer for tokens per call (default o200k_base).
        cache: A `VectorCache` shared by the runs (default: the gate's default location).
        progress: Called as embedding and queries advance.

    Raises:
        ValueError: no ks, or a k below 1.
    """
    if not ks or min(ks) < 1:
        msg = f"k values must be at least 1, got {list(ks)}"
        raise ValueError(msg)
    ks = tuple(sorted(set(ks)))
    counter = counter or get_counter()
    gspecs, renamed = gate_specs(specs)
    names = [s.name for s in gspecs]
    pricer = _Pricer(gspecs, specs, counter)
    eager = pricer.tools(tuple(names))
    result = BenchResult(len(specs), len(queries), eager, counter.label, ks, renamed=renamed)
    has_preconditions = any(s.preconditions for s in specs)
    runs: dict[tuple[Any, ...], tuple[str, _Run]] = {}
    by_name = {s.name: s for s in gspecs}
    catalog_pool: int | None = None
    for method in methods:
        key = method.decision_key
        note = ""
        if not method.preconditions and not has_preconditions:
            key = (*key[:3], True)
            note = "the catalog declares no preconditions: same decisions as with them"
        if key not in runs:
            try:
                runs[key] = (method.name, _run_gate(method, gspecs, queries, ks, cache, progress))
            except (ImportError, RuntimeError) as exc:
                result.skipped[method.name] = f"{type(exc).__name__}: {exc}"
                continue
            owner = None
        else:
            owner = runs[key][0]
        run = runs[key][1]
        tokens: dict[int, float] = {}
        tools_n: dict[int, float] = {}
        for k in ks:
            per_call: list[float] = []
            for shown in run.shown[k]:
                if method.disclosure == "summaries":
                    per_call.append(_summaries(by_name, shown, counter))
                elif method.disclosure == "catalog-pool":
                    if catalog_pool is None:
                        catalog_pool = _catalog_pool(gspecs)
                    per_call.append(pricer.tools(shown) + catalog_pool)
                else:
                    per_call.append(pricer.tools(shown) + run.gate.pool(names)[1])
            tokens[k] = mean(per_call)
            tools_n[k] = mean(len(s) for s in run.shown[k])
        gold = [q.gold_ids for q in queries]
        result.methods.append(
            MethodResult(
                spec=method,
                ranker=run.gate.ranker_name,
                recall={
                    k: mean(recall(s, g) for s, g in zip(run.shown[k], gold, strict=True))
                    for k in ks
                },
                hit={
                    k: mean(hit(s, g) for s, g in zip(run.shown[k], gold, strict=True)) for k in ks
                },
                tokens_per_call=tokens,
                tools_per_call=tools_n,
                latency_ms=run.latency_ms,
                build_s=run.build_s,
                embedded=run.embedded,
                shares_decisions_with=owner,
                note=note,
            )
        )
    return result
