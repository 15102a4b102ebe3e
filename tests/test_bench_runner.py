"""`run_bench` on a six-tool catalog whose right answers are known (BM25: no model needed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from attention_scoping.common.tokens import get_counter
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.gating.cache import VectorCache
from attention_scoping.observe.tax import tool_tokens
from attention_scoping_lab.bench import METHODS, resolve_methods, run_bench
from attention_scoping_lab.bench.report import plot, to_json
from attention_scoping_lab.bench.runner import BenchError
from attention_scoping_lab.catalog import CatalogError, Query, load_catalog, load_queries

DATA = Path(__file__).resolve().parent / "data"

Tiny = tuple[list[ToolSpec], list[Query]]
"""The six-tool catalog and its labelled queries."""


@pytest.fixture(scope="module")
def tiny() -> Tiny:
    specs = load_catalog(DATA / "tiny_catalog.jsonl")
    return specs, load_queries(DATA / "tiny_queries.jsonl", specs)


def test_bm25_on_known_answers(tiny: Tiny) -> None:
    specs, queries = tiny
    result = run_bench(specs, queries, resolve_methods(["bm25"]), ks=(1, 3, 10))
    (bm25,) = result.methods
    # q1 forecast -> get_forecast first; q2 needs two tools, one fits at k=1; q3 refund first.
    assert bm25.recall[1] == pytest.approx((1 + 0.5 + 1) / 3)
    assert bm25.hit[1] == 1.0
    assert bm25.recall[3] == 1.0 and bm25.recall[10] == 1.0
    assert result.n_tools == 6 and result.n_queries == 3
    assert result.eager_tokens_per_call == tool_tokens([s.provider_schema() for s in specs])
    # k=10 >= 6 tools: the gate sends every tool whose precondition holds and no summary pool;
    # refund_payment needs authenticated=True, which only q3's state has
    assert bm25.tools_per_call[10] == pytest.approx((5 + 5 + 6) / 3)
    refund = next(s for s in specs if s.id == "refund_payment")
    others = tool_tokens([s.provider_schema() for s in specs if s is not refund])
    expected = (2 * others + result.eager_tokens_per_call) / 3
    assert bm25.tokens_per_call[10] == pytest.approx(expected)
    assert len(bm25.latency_ms) == 3 and bm25.latency_ms_p95 >= bm25.latency_ms_p50 > 0


def test_tokens_per_call_include_the_shipped_summary_pool(
    tiny: Tiny,
) -> None:
    specs, queries = tiny
    result = run_bench(specs, queries[:1], resolve_methods(["bm25"]), ks=(1,))
    gate = ToolAttentionMiddleware(ranker="bm25", k=1, emit_events=False)
    gate.index.fit_catalog(specs)
    pool_tokens = gate.pool([s.name for s in specs], not_reads=())[1]
    assert pool_tokens > 0  # six candidates, k=1: the auto pool fits its budget
    forecast = next(s for s in specs if s.id == "get_forecast")
    expected = tool_tokens([forecast.provider_schema()]) + pool_tokens
    assert result.methods[0].tokens_per_call[1] == expected


def test_preconditions_hide_tools_unless_the_state_allows(tmp_path: Path) -> None:
    specs = load_catalog(DATA / "tiny_catalog.jsonl")
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "a", "query": "Refund the payment of order 9.", "gold_ids": ["refund_payment"]}\n'
    )
    loaded = load_queries(queries, specs)
    with_pre, without = run_bench(
        specs, loaded, [*resolve_methods(["bm25"]), METHODS["no-preconditions"]], ks=(3,)
    ).methods[:2]
    assert with_pre.recall[3] == 0.0  # not authenticated: refund_payment is hidden
    # the ablation runs the default ranker; on this query any ranker finds it
    assert without.spec.name == "no-preconditions"


def test_disclosure_variants_share_decisions(tiny: Tiny) -> None:
    specs, queries = tiny
    methods = [
        METHODS["bm25"],
        METHODS["bm25"].__class__("bm25-summaries", "x", ranker="bm25", disclosure="summaries"),
        METHODS["bm25"].__class__("bm25-catalog", "x", ranker="bm25", disclosure="catalog-pool"),
    ]
    result = run_bench(specs, queries, methods, ks=(1, 3))
    base, summaries, catalog = result.methods
    assert summaries.shares_decisions_with == "bm25" and catalog.shares_decisions_with == "bm25"
    assert summaries.recall == base.recall
    # the shipped pool (auto) already lists all six tools here: the catalog pool costs the same
    assert summaries.tokens_per_call[3] < base.tokens_per_call[3] <= catalog.tokens_per_call[3]


def test_json_shape_and_plot(tiny: Tiny, tmp_path: Path) -> None:
    specs, queries = tiny
    cache = VectorCache(tmp_path / "vectors")  # never the user's cache
    result = run_bench(specs, queries, resolve_methods(["bm25", "hashing"]), ks=(1, 5), cache=cache)
    doc = to_json(result)
    assert set(doc) == {"n_tools", "n_queries", "eager_tokens_per_call", "methods"}
    entry = doc["methods"]["bm25"]
    assert set(entry) == {"recall", "hit", "tokens_per_call", "latency_ms_p50", "latency_ms_p95"}
    assert set(entry["recall"]) == {"1", "5"} and set(entry["tokens_per_call"]) == {"1", "5"}
    target = tmp_path / "bench.png"
    plot(result, target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _with_ids(specs: list[ToolSpec]) -> list[ToolSpec]:
    """The same tools under ids that differ from their names (`srv/name`)."""
    return [replace(s, id=f"{s.server or 'srv'}/{s.name}") for s in specs]


def test_ids_that_differ_from_names_score_as_ids(tiny: tuple[list[ToolSpec], list]) -> None:
    specs, queries = tiny
    renamed = _with_ids(specs)
    moved = {s.name: r.id for s, r in zip(specs, renamed, strict=True)}
    queries2 = [replace(q, gold_ids=tuple(moved[g] for g in q.gold_ids)) for q in queries]
    methods = resolve_methods(["bm25"])
    plain = run_bench(specs, queries, methods, ks=(1, 3)).methods[0]
    keyed = run_bench(renamed, queries2, methods, ks=(1, 3)).methods[0]
    assert keyed.recall == plain.recall and keyed.recall[3] == 1.0
    assert keyed.tokens_per_call == plain.tokens_per_call  # the provider still sees the names


def test_tools_sharing_a_name_are_told_apart_by_id() -> None:
    params = {"type": "object", "properties": {}}
    specs = [
        ToolSpec("docs/search", "search", "Search documents and manuals.", params, "docs"),
        ToolSpec("tickets/search", "search", "Search support tickets by status.", params, "tk"),
        ToolSpec("mail/send", "send", "Send an email message.", params, "mail"),
    ]
    queries = [Query("a", "find open support tickets by status", ("tickets/search",))]
    (bm25,) = run_bench(specs, queries, resolve_methods(["bm25"]), ks=(1,)).methods
    assert bm25.recall[1] == 1.0


def test_gold_names_where_ids_differ_are_refused(
    tiny: tuple[list[ToolSpec], list],
    tmp_path: Path,
) -> None:
    specs = _with_ids(tiny[0])
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "query": "forecast for Paris", "gold_ids": ["get_forecast"]}\n')
    with pytest.raises(CatalogError, match="'get_forecast' is a tool name, not a catalog id"):
        load_queries(path, specs)
    # built by hand (no loader): the run itself refuses, since no gold is ever shown
    queries = [replace(q, gold_ids=(q.gold_ids[0],)) for q in tiny[1]]
    with pytest.raises(BenchError, match="'gold_ids' are catalog ids"):
        run_bench(specs, queries, resolve_methods(["bm25"]), ks=(1, 3))


def test_unknown_method_and_bad_k() -> None:
    with pytest.raises(ValueError, match="unknown method 'fast'"):
        resolve_methods(["fast"])
    specs = load_catalog(DATA / "tiny_catalog.jsonl")
    with pytest.raises(ValueError, match="at least 1"):
        run_bench(specs, [], resolve_methods(["bm25"]), ks=(0,))


def test_counter_choice(tiny: Tiny) -> None:
    specs, queries = tiny
    result = run_bench(
        specs, queries[:1], resolve_methods(["bm25"]), ks=(1,), counter=get_counter("cl100k_base")
    )
    assert result.tokenizer.startswith("cl100k_base")
