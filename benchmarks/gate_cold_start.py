"""Benchmark: the gate's cold start, decision latency and memory on a real catalog.

    python benchmarks/gate_cold_start.py [--catalog PATH] [--queries PATH] [--threads N]
        [--whole-request]

Runs in a fresh interpreter: imports, loads the default encoder, indexes the catalog (vectors read
from the on-disk cache when warm; run it twice to see both), answers the first query; then times
the gate decision (`ToolAttentionMiddleware.decide_names`: query embedding, hybrid scores over
every tool, top-k) over all queries, and reports peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

T0 = time.perf_counter()

from langchain_core.messages import HumanMessage  # noqa: E402

from attention_scoping.gating import MiniLMOnnxEncoder, ToolAttentionMiddleware  # noqa: E402
from attention_scoping.gating.cache import VectorCache  # noqa: E402
from attention_scoping.gating.ranking import DenseRanker, HybridRanker  # noqa: E402
from attention_scoping_lab.catalog import load_catalog, load_queries  # noqa: E402

DATA = str(Path(__file__).resolve().parent.parent / "data")


def main() -> None:
    """Print cold start, decision latency percentiles and peak memory."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog", default=f"{DATA}/catalog_bfcl.jsonl")
    parser.add_argument("--queries", default=f"{DATA}/queries_bfcl_dev.jsonl")
    parser.add_argument(
        "--add-catalog",
        action="append",
        default=[],
        metavar="C",
        help="more tools to rank (ids already present are skipped): a bigger catalog, same queries",
    )
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads")
    parser.add_argument(
        "--whole-request", action="store_true", help="rank the whole request only (no parts)"
    )
    args = parser.parse_args()

    imported_s = time.perf_counter() - T0
    specs = load_catalog(args.catalog)
    for extra in args.add_catalog:
        seen = {s.id for s in specs}
        specs += [s for s in load_catalog(extra) if s.id not in seen]
    queries = load_queries(args.queries, specs)
    cache = VectorCache()
    encoder = MiniLMOnnxEncoder(threads=args.threads)
    start = time.perf_counter()
    encoder.encode(["load the model"])
    model_s = time.perf_counter() - start
    ranker = HybridRanker(DenseRanker(encoder, cache=cache), multi_intent=not args.whole_request)
    gate = ToolAttentionMiddleware(ranker=ranker, summary_pool="off")
    start = time.perf_counter()
    gate.index.fit_catalog(specs)
    index_s = time.perf_counter() - start
    names = [s.id for s in specs]  # a catalog is indexed by id
    first = gate.decide_names({"messages": [HumanMessage(queries[0].query)]}, names)
    cold_s = time.perf_counter() - T0
    samples = []
    for query in queries:
        state = {"messages": [HumanMessage(query.query)]}
        t = time.perf_counter()
        gate.decide_names(state, names)
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"tools {len(specs)}, queries {len(queries)}, ranker {gate.ranker_name}")
    print(f"index: {index_s:.2f} s ({cache.misses} tools embedded, {cache.hits} from the cache)")
    print(
        f"cold start: {cold_s:.2f} s in all = imports (LangChain included) {imported_s:.2f} s "
        f"+ model load {model_s:.2f} s + index {index_s:.2f} s + catalog load and first decision"
    )
    print(f"first decision shown: {list(first.shown)}")
    print(
        f"decision latency: p50 {statistics.median(samples):.2f} ms, "
        f"p95 {samples[int(0.95 * (len(samples) - 1))]:.2f} ms"
    )
    print(f"peak RSS: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
