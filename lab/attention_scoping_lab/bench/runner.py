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

from attention_scoping.common.tokens import TokenCounter, get_counter
from attention_scoping.common.tool import ToolSpec
from attention_scoping.observe.tax import summary_pool_tokens
from attention_scoping_lab.bench.methods import MethodSpec, build_gate
from attention_scoping_lab.bench.metrics import hit, mean, percentile, recall
from attention_scoping_lab.bench.vectors import MemoEncoder, Progress, warm_vectors
from attention_scoping_lab.catalog import Query

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


class BenchError(ValueError):
    """The benchmark cannot be scored as given (a clear message, no traceback, exit 2)."""


class _Rankers:
    """One ranker per ranker name, shared by every method that uses it (fitted once), over
    one memoizing encoder (each query embedded once, reused by every method)."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.encoders: list[MemoEncoder] = []
        self._built: dict[str, Any] = {}
        self._encoder: MemoEncoder | None = None

    def get(self, name: str, *, multi_intent: bool = True, calibrated: bool = True) -> Any:
        """The ranker `name` (as `build_ranker` names it); a hybrid variant shares the dense
        and lexical rankers of the plain one (one fit, one set of query vectors)."""
        from attention_scoping.gating.ranking import HybridRanker

        base = self._base(name)
        if not isinstance(base, HybridRanker) or (multi_intent and calibrated):
            return base
        key = f"{name}:{multi_intent}:{calibrated}"
        if key not in self._built:
            self._built[key] = HybridRanker(
                base.dense,
                base.lexical,
                alpha=base.alpha,
                multi_intent=multi_intent,
                confident_cosine=base.confident_cosine if calibrated else None,
            )
        return self._built[key]

    def _base(self, name: str) -> Any:
        """One ranker per name; the MiniLM rankers share one encoder, and every ranker that
        uses BM25 shares one index (fitted once)."""
        from attention_scoping.gating.encoders import (
            EncoderUnavailableError,
            HashingEncoder,
            shared_minilm,
        )
        from attention_scoping.gating.ranking import (
            BM25Ranker,
            DenseRanker,
            HybridRanker,
            build_ranker,
        )

        if name in self._built:
            return self._built[name]
        lexical = self._built.setdefault("bm25", BM25Ranker())
        if name == "bm25":
            return lexical
        if name in ("default", "hybrid", "dense"):
            if self._encoder is None:
                try:
                    encoder = shared_minilm()
                except EncoderUnavailableError:
                    return build_ranker(name, self.cache)  # BM25 fallback, or the error
                self._encoder = MemoEncoder(encoder)
                self.encoders.append(self._encoder)
            dense = self._built.setdefault("dense", DenseRanker(self._encoder, cache=self.cache))
            if name != "dense":
                self._built[name] = HybridRanker(dense, lexical)
        elif name == "hashing":
            hashing = DenseRanker(HashingEncoder(), cache=self.cache)
            self._built[name] = HybridRanker(hashing, lexical)
        else:
            self._built[name] = build_ranker(name, self.cache)
        return self._built[name]

    def charged(self) -> float:
        """Embedding time charged so far (fresh or reused), over every shared encoder."""
        return sum(e.charged_ms for e in self.encoders)

    def fresh(self) -> float:
        """Embedding time actually spent so far."""
        return sum(e.fresh_ms for e in self.encoders)


def _run_gate(
    method: MethodSpec,
    specs: Sequence[ToolSpec],
    queries: Sequence[Query],
    ks: Sequence[int],
    rankers: _Rankers,
    progress: Progress | None,
) -> _Run:
    nominal = NOMINAL_K if NOMINAL_K in ks else max(ks)
    ranker = rankers.get(
        method.ranker, multi_intent=method.multi_intent, calibrated=method.calibrated
    )
    gate = build_gate(method, specs, nominal, ranker=ranker)
    embedded = warm_vectors(gate.index.ranker, specs, progress)
    started = time.perf_counter()
    gate.index.fit_catalog(specs)
    build_s = time.perf_counter() - started
    keys = [s.id for s in specs]
    shown: dict[int, list[tuple[str, ...]]] = {k: [] for k in ks}
    latency: list[float] = []
    label = f"{method.name}: {len(queries):,} queries"
    others = [k for k in ks if k != nominal]
    for query in queries[:WARM_UP]:
        gate.decide_names(
            {**query.state, "messages": [HumanMessage(f"{query.query} (warm-up)")]}, keys
        )
    for number, query in enumerate(queries):
        state: dict[str, Any] = {**query.state, "messages": messages_of(query)}
        gate.k = nominal
        charged, fresh = rankers.charged(), rankers.fresh()
        started = time.perf_counter()
        decision = gate.decide_names(state, keys)
        wall = (time.perf_counter() - started) * 1000.0
        # a query vector another method already computed is charged as if embedded here
        latency.append(wall - (rankers.fresh() - fresh) + (rankers.charged() - charged))
        shown[nominal].append(tuple(decision.shown))
        try:
            for k in others:
                gate.k = k
                shown[k].append(tuple(gate.decide_names(state, keys).shown))
        finally:
            gate.k = nominal
        if progress is not None:
            progress(label, number + 1, len(queries))
    return _Run(gate, shown, latency, build_s, embedded)


class _Pricer:
    """Tokens of what one call carries, memoized (many queries expose the same tools)."""

    def __init__(self, specs: Sequence[ToolSpec], counter: TokenCounter):
        from attention_scoping.observe.tax import tools_json

        self._specs = {s.id: s for s in specs}
        self._schemas = {s.id: s.provider_schema() for s in specs}
        self._tools_json = tools_json
        self._counter = counter
        self._memo: dict[tuple[str, ...], int] = {}
        self._summaries: dict[tuple[str, ...], int] = {}

    def tools(self, shown: tuple[str, ...]) -> int:
        """Tokens of the tools array holding the full schemas of `shown` (catalog ids)."""
        cached = self._memo.get(shown)
        if cached is None:
            schemas = [self._schemas[n] for n in shown if n in self._schemas]
            cached = self._counter.count(self._tools_json(schemas)) if schemas else 0
            self._memo[shown] = cached
        return cached

    def summaries(self, shown: tuple[str, ...]) -> int:
        """Tokens of the shown tools as one-line summaries in the gate's pool format."""
        cached = self._summaries.get(shown)
        if cached is None:
            lines = [(self._specs[n].name, self._specs[n].summary) for n in shown]
            cached = summary_pool_tokens(lines, self._counter) if lines else 0
            self._summaries[shown] = cached
        return cached


def _not_reads(specs: Sequence[ToolSpec]) -> list[str]:
    """The ids of the tools a spec does not declare a read (`ToolSpec.risk`): the gate's pool
    never names them."""
    return [s.id for s in specs if s.risk != "read"]


def _catalog_pool(specs: Sequence[ToolSpec]) -> int:
    """Tokens of the summary pool of every tool, as a gate with `summary_pool="catalog"` sends
    it (that gate is built here only for its pool)."""
    from attention_scoping.gating import ToolAttentionMiddleware

    gate = ToolAttentionMiddleware(ranker="bm25", summary_pool="catalog", emit_events=False)
    gate.index.fit_catalog(specs)
    return gate.pool([s.id for s in specs], not_reads=_not_reads(specs))[1]


def _check_gold_shown(runs: Mapping[Any, tuple[str, _Run]], queries: Sequence[Query]) -> None:
    """Refuse a run in which no method ever showed a gold tool: the labels and the catalog do
    not speak of the same tools (e.g. gold ids that are tool names where ids differ)."""
    if not runs or not queries:
        return
    for _, run in runs.values():
        for exposed in run.shown.values():
            if any(set(s) & set(q.gold_ids) for s, q in zip(exposed, queries, strict=True)):
                return
    msg = (
        f"no method showed any gold tool for any of the {len(queries):,} queries at any k: "
        "check that 'gold_ids' are catalog ids (not tool names) and that the queries belong to "
        "this catalog"
    )
    raise BenchError(msg)


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
        BenchError: no method showed any gold tool (gold ids and catalog ids do not match).
    """
    if not ks or min(ks) < 1:
        msg = f"k values must be at least 1, got {list(ks)}"
        raise ValueError(msg)
    ks = tuple(sorted(set(ks)))
    counter = counter or get_counter()
    pricer = _Pricer(specs, counter)
    eager = pricer.tools(tuple(s.id for s in specs))
    result = BenchResult(len(specs), len(queries), eager, counter.label, ks)
    has_preconditions = any(s.preconditions for s in specs)
    runs: dict[tuple[Any, ...], tuple[str, _Run]] = {}
    rankers = _Rankers(cache)
    pools: dict[str, int] = {}
    for method in methods:
        key = method.decision_key
        note = ""
        if not method.preconditions and not has_preconditions:
            key = (*key[:3], True, *key[4:])
            note = "the catalog declares no preconditions: same decisions as with them"
        if key not in runs:
            try:
                runs[key] = (method.name, _run_gate(method, specs, queries, ks, rankers, progress))
            except (ImportError, RuntimeError) as exc:
                result.skipped[method.name] = f"{type(exc).__name__}: {exc}"
                continue
            owner = None
        else:
            owner = runs[key][0]
        run = runs[key][1]
        result.methods.append(
            _figures(
                method, run, queries, ks, _price(method, run, specs, pricer, pools), owner, note
            )
        )
    _check_gold_shown(runs, queries)
    return result


def _price(
    method: MethodSpec,
    run: _Run,
    specs: Sequence[ToolSpec],
    pricer: _Pricer,
    pools: dict[str, int],
) -> dict[int, float]:
    """Mean tokens per call at each k for `method`'s disclosure of `run`'s decisions."""
    if method.disclosure == "catalog-pool" and "catalog" not in pools:
        pools["catalog"] = _catalog_pool(specs)
    pool = pools.get("catalog", 0) if method.disclosure == "catalog-pool" else 0
    if method.disclosure == "shipped":
        pool = run.gate.pool([s.id for s in specs], not_reads=_not_reads(specs))[1]
    tokens: dict[int, float] = {}
    for k, exposed in run.shown.items():
        if method.disclosure == "summaries":
            tokens[k] = mean(pricer.summaries(shown) for shown in exposed)
        else:
            tokens[k] = mean(pricer.tools(shown) + pool for shown in exposed)
    return tokens


def _figures(
    method: MethodSpec,
    run: _Run,
    queries: Sequence[Query],
    ks: Sequence[int],
    tokens: dict[int, float],
    owner: str | None,
    note: str,
) -> MethodResult:
    """recall, hit and sizes of one method's decisions."""
    gold = [q.gold_ids for q in queries]
    return MethodResult(
        spec=method,
        ranker=run.gate.ranker_name,
        recall={k: mean(recall(s, g) for s, g in zip(run.shown[k], gold, strict=True)) for k in ks},
        hit={k: mean(hit(s, g) for s, g in zip(run.shown[k], gold, strict=True)) for k in ks},
        tokens_per_call=tokens,
        tools_per_call={k: mean(len(s) for s in run.shown[k]) for k in ks},
        latency_ms=run.latency_ms,
        build_s=run.build_s,
        embedded=run.embedded,
        shares_decisions_with=owner,
        note=note,
    )
