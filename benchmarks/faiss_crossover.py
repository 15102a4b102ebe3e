"""Benchmark: would FAISS beat a numpy matrix product for the gate's dense scores?

    python benchmarks/faiss_crossover.py [--sizes 1000,5000,20000,50000] [--queries 200]

Needs `faiss-cpu` (not a dependency of the package). The gate needs a score for every candidate
(dense scores are min-max fused with BM25 over the candidates), so its numpy path is one
(n x 384) @ (384,) product. The FAISS alternative measured here is an HNSW search of the 1,000
nearest tools (efSearch 2,000), the others given the lowest of those scores. Random unit
vectors; prints p50 per size, the HNSW build time (paid again on every catalog change), and the
share of the exact top 5 that the approximate scores keep.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

DEPTH = 1000


def _faiss_scores(index: object, vector: np.ndarray, size: int) -> np.ndarray:
    depth = min(DEPTH, size)
    found, ids = index.search(vector[None, :].astype(np.float32), depth)  # type: ignore[attr-defined]
    valid = ids[0] >= 0
    out = np.full(size, float(found[0][valid].min()) if valid.any() else 0.0, dtype=np.float32)
    out[ids[0][valid]] = found[0][valid]
    return out


def main() -> None:
    """Print, per catalog size, numpy and FAISS p50 latency and FAISS's index build time."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000,20000,50000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    import faiss

    rng = np.random.default_rng(0)
    print("tools     numpy p50 ms   faiss p50 ms   faiss build s   top-5 kept")
    for size in (int(s) for s in args.sizes.split(",")):
        matrix = rng.standard_normal((size, 384)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        noise = rng.standard_normal((args.queries, 384)).astype(np.float32)
        queries = matrix[rng.integers(0, size, args.queries)] + 0.5 * noise
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        numpy_ms = []
        for q in queries:
            started = time.perf_counter()
            matrix @ q
            numpy_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        index = faiss.IndexHNSWFlat(384, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = 2 * DEPTH
        index.add(matrix)
        build_s = time.perf_counter() - started
        faiss_ms, kept = [], []
        for q in queries:
            started = time.perf_counter()
            approx = _faiss_scores(index, q, size)
            faiss_ms.append((time.perf_counter() - started) * 1000)
            top = set(np.argsort(-(matrix @ q))[:5].tolist())
            kept.append(len(top & set(np.argsort(-approx)[:5].tolist())) / 5)
        print(
            f"{size:>7,}   {statistics.median(numpy_ms):10.2f}   "
            f"{statistics.median(faiss_ms):12.2f}   {build_s:13.1f}   {statistics.mean(kept):10.3f}"
        )


if __name__ == "__main__":
    main()
