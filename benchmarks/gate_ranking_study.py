"""Ranking study: fusion and multi-intent variants on both dev sets, with split-half selection.

    python benchmarks/gate_ranking_study.py [--seeds 10]

Embeds every tool and query once (vectors cached), then scores ranking variants with numpy:
BM25 only, dense only, the fixed 0.65 fusion, adaptive fusion (lexical weight scaled by how much
of the query BM25 explains), and multi-intent merging (each part of a request ranked on its own,
merged by max over parts). Prints recall@5 per dev set and, for the weight parameters, the
held-out figure of choosing them on one half of the queries and scoring the other half.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

from attention_scoping.catalog import load_catalog, load_queries
from attention_scoping.gating.bm25 import BM25Index
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import MiniLMOnnxEncoder
from attention_scoping.gating.intents import split_intents
from attention_scoping.gating.ranking import fuse
from attention_scoping.gating.text import tool_text

DATA = Path(__file__).resolve().parent.parent / "data"
SETS = {"bfcl": "bfcl_dev", "sealtools": "sealtools_dev"}
K = 5


def load(
    name: str, encoder: MiniLMOnnxEncoder, cache: VectorCache, query_cache: VectorCache
) -> list[tuple]:  # type: ignore[type-arg]
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


def variant_scores(item: tuple, method: str, alpha: float, parts: bool) -> np.ndarray:  # type: ignore[type-arg]
    """Final scores of one query under a method."""
    dense, lexical, bm25, texts, _ = item
    use = range(len(texts)) if parts else range(1)
    rows = []
    for i in use:
        if method == "bm25":
            rows.append(lexical[i] / max(lexical[i].max(), 1e-9))
        elif method == "dense":
            d = dense[i]
            rows.append((d - d.min()) / max(d.max() - d.min(), 1e-9))
        else:
            coverage = bm25.coverage(texts[i]) if method == "adaptive" else 1.0
            rows.append(fuse(dense[i], lexical[i], alpha=alpha, coverage=coverage))
    return np.max(np.stack(rows), axis=0)


def evaluate(items: list, method: str, alpha: float, parts: bool) -> np.ndarray:  # type: ignore[type-arg]
    """Recall@K per query."""
    out = []
    for item in items:
        scores = variant_scores(item, method, alpha, parts)
        out.append(recall(np.argsort(-scores, kind="stable"), item[4]))
    return np.asarray(out)


def main() -> None:
    """Print the table and the split-half estimates."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    encoder = MiniLMOnnxEncoder()
    cache = VectorCache()
    # query vectors stay out of the user's tool cache: a local folder (git-ignored)
    query_cache = VectorCache(Path(".attention_scoping_cache") / "study-queries")
    data = {name: load(name, encoder, cache, query_cache) for name in SETS}
    alphas = (0.4, 0.5, 0.6, 0.65, 0.7, 0.8)
    grid = [("bm25", 0.0), ("dense", 1.0)] + [
        (m, a) for m, a in itertools.product(("fixed", "adaptive"), alphas)
    ]
    per_query: dict[tuple[str, float, bool], dict[str, np.ndarray]] = {}
    print(f"recall@{K}         " + "  ".join(f"{n:>9}" for n in SETS))
    for (method, alpha), parts in itertools.product(grid, (False, True)):
        key = (method, alpha, parts)
        per_query[key] = {n: evaluate(items, method, alpha, parts) for n, items in data.items()}
        label = f"{method}{'' if method in ('bm25', 'dense') else f' a={alpha:g}'}"
        label += " +parts" if parts else ""
        print(f"{label:<20}" + "  ".join(f"{per_query[key][n].mean():9.3f}" for n in SETS))
    # split-half: choose alpha (per method family, parts on) on one half of both sets, score other
    rng = np.random.default_rng(0)
    for family in ("fixed", "adaptive"):
        held = {n: [] for n in SETS}
        for _ in range(args.seeds):
            masks = {n: rng.permutation(len(data[n])) < len(data[n]) // 2 for n in SETS}
            best = max(
                alphas,
                key=lambda a: sum(per_query[(family, a, True)][n][masks[n]].mean() for n in SETS),
            )
            for n in SETS:
                held[n].append(per_query[(family, best, True)][n][~masks[n]].mean())
        print(
            f"held-out {family} +parts: "
            + "  ".join(
                f"{n} {np.mean(v):.3f} ({min(v):.3f}-{max(v):.3f})" for n, v in held.items()
            )
        )


if __name__ == "__main__":
    main()
