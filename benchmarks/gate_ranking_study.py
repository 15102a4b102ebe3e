"""Ranking study: fusion and multi-intent variants on both dev sets, with split-half selection.

    python benchmarks/gate_ranking_study.py [--seeds 10]

Embeds every tool and query once (vectors cached), then scores ranking variants with numpy:
BM25 only, dense only, the fixed 0.65 fusion, adaptive fusion (lexical weight scaled by how much
of the query BM25 explains), and multi-intent merging (each part of a request ranked on its own,
weighted against the whole request, whose vector is then the word-weighted mean of the parts
vectors, as in `HybridRanker`). Prints recall@5 per dev set, then the held-out figure of
choosing (alpha, part weight) on a random half of both sets and scoring the other halves.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

from attention_scoping.common.text import tool_text
from attention_scoping.gating.bm25 import BM25Index
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import MiniLMOnnxEncoder
from attention_scoping.gating.intents import split_intents
from attention_scoping.gating.ranking import fuse, minmax
from attention_scoping_lab.catalog import load_catalog, load_queries

DATA = Path(__file__).resolve().parent.parent / "data"
SETS = {"bfcl": "bfcl_dev", "sealtools": "sealtools_dev"}
K = 5


def load(
    name: str, encoder: MiniLMOnnxEncoder, cache: VectorCache, query_cache: VectorCache
) -> list[tuple]:
    """Raw dense and BM25 scores of every query and of every query part."""
    specs = load_catalog(DATA / f"catalog_{name}.jsonl")
    queries = load_queries(DATA / f"queries_{SETS[name]}.jsonl", specs)
    texts = [tool_text(s) for s in specs]
    matrix = cache.vectors(encoder, texts)
    bm25 = BM25Index(texts)
    rows = {s.id: i for i, s in enumerate(specs)}
    per_query = []
    for q in queries:
        parts = split_intents(q.query)
        per_query.append([q.query, *parts] if len(parts) > 1 else [q.query])
    flat = list(dict.fromkeys(t for group in per_query for t in group))
    vectors = dict(zip(flat, query_cache.vectors(encoder, flat), strict=True))  # one batch
    items = []
    for q, group in zip(queries, per_query, strict=True):
        dense = np.stack([vectors[t] for t in group]) @ matrix.T
        lexical = np.stack([bm25.scores(t) for t in group])
        items.append((dense, lexical, bm25, group, [rows[g] for g in q.gold_ids]))
    return items


def recall(order: np.ndarray, gold: list[int]) -> float:
    """Share of gold rows in the first K of `order`."""
    top = set(order[:K].tolist())
    return sum(1 for g in gold if g in top) / len(gold)


def variant_scores(item: tuple, method: str, alpha: float, beta: float | None) -> np.ndarray:
    """Final scores of one query; `beta` None: the whole request only, else parts weighted
    `beta` against it (the `HybridRanker` merge; 1.0 is a plain max over the texts)."""
    dense, lexical, bm25, texts, _ = item
    if beta is not None and len(texts) > 1:  # as HybridRanker: the request's row from its parts
        weights = np.asarray([max(len(t.split()), 1) for t in texts[1:]], dtype=np.float32)
        dense = np.vstack([(weights / weights.sum()) @ dense[1:], dense[1:]])
    use = range(len(texts)) if beta is not None else range(1)
    rows = []
    for i in use:
        if method == "bm25":
            rows.append(lexical[i] / max(float(lexical[i].max()), 1e-9))
        elif method == "dense":
            rows.append(minmax(dense[i]))
        else:
            coverage = bm25.coverage(texts[i], lexical[i]) if method == "adaptive" else 1.0
            rows.append(fuse(dense[i], lexical[i], alpha=alpha, coverage=coverage))
    if len(rows) == 1:
        return rows[0]
    return np.maximum(rows[0], (beta or 1.0) * np.max(np.stack(rows[1:]), axis=0))


def evaluate(items: list, method: str, alpha: float, beta: float | None) -> np.ndarray:
    """Recall@K per query."""
    out = []
    for item in items:
        scores = variant_scores(item, method, alpha, beta)
        out.append(recall(np.argsort(-scores, kind="stable"), item[4]))
    return np.asarray(out)


def main() -> None:
    """Print the table and the split-half estimates."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    encoder = MiniLMOnnxEncoder()
    cache = VectorCache()
    # query vectors stay out of the user's tool cache: a local folder (git-ignored)
    query_cache = VectorCache(Path(".attention_scoping_cache") / "study-queries")
    data = {name: load(name, encoder, cache, query_cache) for name in SETS}
    rows: list[tuple[str, str, float, float | None]] = [
        ("bm25", "bm25", 0.0, None),
        ("bm25, parts max", "bm25", 0.0, 1.0),
        ("dense", "dense", 1.0, None),
        ("dense, parts max", "dense", 1.0, 1.0),
        ("fixed 0.65 (previous default)", "fixed", 0.65, None),
        ("adaptive 0.65", "adaptive", 0.65, None),
        ("fixed 0.65, parts max", "fixed", 0.65, 1.0),
        ("adaptive 0.65, parts 0.9", "adaptive", 0.65, 0.9),
        ("fixed 0.65, parts 0.9 (default)", "fixed", 0.65, 0.9),
    ]
    print(f"recall@{K:<34}" + "  ".join(f"{n:>9}" for n in SETS))
    for label, method, alpha, beta in rows:
        figures = [evaluate(items, method, alpha, beta).mean() for items in data.values()]
        print(f"{label:<42}" + "  ".join(f"{f:9.3f}" for f in figures))
    # split-half: choose (alpha, beta) on one half of BOTH sets, score the other halves
    grid = list(itertools.product((0.5, 0.6, 0.65, 0.7, 0.8), (0.7, 0.8, 0.9, 1.0)))
    per_query = {
        (a, b): {n: evaluate(items, "fixed", a, b) for n, items in data.items()} for a, b in grid
    }
    rng = np.random.default_rng(0)
    held: dict[str, list[float]] = {n: [] for n in SETS}
    chosen = []
    for _ in range(args.seeds):
        masks = {n: rng.permutation(len(data[n])) < len(data[n]) // 2 for n in SETS}
        best = max(grid, key=lambda c: sum(per_query[c][n][masks[n]].mean() for n in SETS))
        chosen.append(best)
        for n in SETS:
            held[n].append(float(per_query[best][n][~masks[n]].mean()))
    print(f"split-half ({args.seeds} splits), (alpha, parts weight) chosen: {sorted(set(chosen))}")
    print(
        "held-out recall@5: "
        + "  ".join(f"{n} {np.mean(v):.3f} ({min(v):.3f}-{max(v):.3f})" for n, v in held.items())
    )

    no_tool(encoder, cache)


SMALL_TALK = tuple(
    (Path(__file__).resolve().parent / "data" / "small_talk.txt").read_text().splitlines()
)
"""Requests no tool serves (generic conversation, not drawn from either dev set)."""


def no_tool(encoder: MiniLMOnnxEncoder, cache: VectorCache) -> None:
    """Tools the default gate would send at k=5 for small talk, calibrated or not."""
    from attention_scoping.gating.ranking import (
        RELEVANCE_THRESHOLD,
        DenseRanker,
        HybridRanker,
        top_rows,
    )

    for name in SETS:
        specs = load_catalog(DATA / f"catalog_{name}.jsonl")
        counts = {}
        for calibrated in (True, False):
            ranker = HybridRanker(
                DenseRanker(encoder, cache=cache),
                confident_cosine=None if not calibrated else 0.3,
            )
            ranker.fit(specs)
            cut = RELEVANCE_THRESHOLD if calibrated else 0.0
            shown = []
            for text in SMALL_TALK:
                scores = ranker.scores(text)
                shown.append(sum(1 for i in top_rows(scores, K) if scores[i] >= cut))
            counts[calibrated] = np.mean(shown)
        print(
            f"small talk on {name}: tools sent at k={K}: {counts[True]:.1f} calibrated "
            f"(threshold {RELEVANCE_THRESHOLD}), {counts[False]:.1f} uncalibrated (threshold 0)"
        )


if __name__ == "__main__":
    main()
