"""Benchmark: where FAISS beats a numpy matrix product for the gate's dense scores.

    python benchmarks/faiss_crossover.py [--sizes 1000,5000,20000,50000,100000] [--queries 200]

The gate needs a score for every candidate (dense scores are fused with BM25 over the whole
catalog), so the numpy path is one (n x 384) @ (384,) product. The FAISS path is what
`DenseRanker` does above `FAISS_MIN_TOOLS`: an HNSW search of the `FAISS_DEPTH` nearest tools,
the rest given the lowest of those scores. Random unit vectors; prints p50 per size and the
recall of the true top 5 within the FAISS depth.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from attention_scoping.gating import ranking


def main() -> None:
    """Print, per catalog size, numpy and FAISS p50 latency and FAISS's index build time."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000,20000,50000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("tools     numpy p50 ms   faiss p50 ms   faiss build s   top-5 kept")
    for size in (int(s) for s in args.sizes.split(",")):
        matrix = rng.standard_normal((size, 384)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        queries = matrix[rng.integers(0, size, args.queries)] + 0.5 * rng.standard_normal(
            (args.queries, 384)
        ).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        numpy_ms = []
        for q in queries:
            started = time.perf_counter()
            exact = matrix @ q
            numpy_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        saved = ranking.FAISS_MIN_TOOLS
        ranking.FAISS_MIN_TOOLS = 0
        index = ranking._faiss_index(matrix)
        ranking.FAISS_MIN_TOOLS = saved
        build_s = time.perf_counter() - started
        if index is None:
            print(f"{size:>7,}   {statistics.median(numpy_ms):10.2f}   (faiss not installed)")
            continue
        faiss_ms, kept = [], []
        for q in queries:
            started = time.perf_counter()
            approx = ranking._faiss_scores(index, q, size)
            faiss_ms.append((time.perf_counter() - started) * 1000)
            exact = matrix @ q
            top = set(np.argsort(-exact)[:5].tolist())
            kept.append(len(top & set(np.argsort(-approx)[:5].tolist())) / 5)
        print(
            f"{size:>7,}   {statistics.median(numpy_ms):10.2f}   "
            f"{statistics.median(faiss_ms):12.2f}   {build_s:13.1f}   {statistics.mean(kept):10.3f}"
        )


if __name__ == "__main__":
    main()
