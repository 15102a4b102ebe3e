"""Suggested scopes: cluster a catalog's tools by what they do and name each cluster from its
tools' names.

Vectors are the gate's own sentence embeddings of the tool text when the `gate` extra is
installed (cached on disk like the gate's), else TF-IDF over the same lexical tokens BM25 uses.
Clustering is spherical k-means with a seeded k-means++ start: deterministic for a catalog.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from attention_scoping.common.tool import ToolSpec

ITERATIONS = 40
"""k-means iterations (converges well before on catalogs of a few thousand tools)."""

SEED = 0
"""Seed of the k-means++ start."""


def _dense_vectors(
    specs: Sequence[ToolSpec], progress: Callable[[str, int, int], None] | None
) -> np.ndarray | None:
    try:
        from attention_scoping.common.text import tool_text
        from attention_scoping.gating.ranking import DenseRanker, build_ranker
        from attention_scoping_lab.bench.vectors import warm_vectors

        ranker = build_ranker("dense")
    except Exception:  # no gate extra: fall back to lexical vectors
        return None
    if not isinstance(ranker, DenseRanker):
        return None
    warm_vectors(ranker, specs, progress)
    texts = [tool_text(s, ranker.representation) for s in specs]
    return np.asarray(ranker.cache.vectors(ranker.encoder, texts), dtype=np.float32)


def _lexical_vectors(specs: Sequence[ToolSpec]) -> np.ndarray:
    from attention_scoping.common.text import lexical_tokens, tool_text

    docs = [Counter(lexical_tokens(tool_text(s, "name_description"))) for s in specs]
    vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
    df = Counter(w for d in docs for w in d)
    matrix = np.zeros((len(specs), max(len(vocab), 1)), dtype=np.float32)
    for row, doc in enumerate(docs):
        for word, count in doc.items():
            matrix[row, vocab[word]] = (1 + math.log(count)) * math.log(1 + len(specs) / df[word])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def kmeans(vectors: np.ndarray, n: int, seed: int = SEED) -> np.ndarray:
    """Spherical k-means labels of unit `vectors` into `n` clusters (k-means++ start)."""
    rng = np.random.default_rng(seed)
    count = len(vectors)
    n = max(1, min(n, count))
    centers = [vectors[int(rng.integers(count))]]
    for _ in range(1, n):
        sims = np.max(vectors @ np.stack(centers).T, axis=1)
        weights = np.clip(1.0 - sims, 0.0, None) ** 2
        total = float(weights.sum())
        pick = int(rng.choice(count, p=weights / total)) if total > 0 else int(rng.integers(count))
        centers.append(vectors[pick])
    matrix = np.stack(centers)
    labels = np.zeros(count, dtype=np.int64)
    for _ in range(ITERATIONS):
        new = np.argmax(vectors @ matrix.T, axis=1)
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        for c in range(n):
            members = vectors[labels == c]
            if len(members) == 0:  # re-seed an empty cluster on the worst-fitting tool
                fit = np.max(vectors @ matrix.T, axis=1)
                matrix[c] = vectors[int(np.argmin(fit))]
                continue
            center = members.sum(axis=0)
            norm = float(np.linalg.norm(center))
            matrix[c] = center / norm if norm else center
    return labels


def _name_words(spec: ToolSpec) -> list[str]:
    from attention_scoping.common.text import STOP_WORDS, split_identifier

    generic = {
        "get",
        "set",
        "list",
        "create",
        "update",
        "delete",
        "find",
        "search",
        "fetch",
        "retrieve",
        "calculate",
        "compute",
        "add",
        "remove",
        "tool",
        "api",
        "info",
        "data",
    }
    words = [w for w in split_identifier(spec.name).split() if len(w) > 2]
    return [w for w in words if w not in STOP_WORDS and w not in generic] or words


def name_clusters(groups: Sequence[Sequence[ToolSpec]]) -> list[str]:
    """A scope name per group: its most distinctive name words (frequent in the group, rare in
    the others), joined by '_', made unique."""
    counts = [Counter(w for s in g for w in set(_name_words(s))) for g in groups]
    spread = Counter(w for c in counts for w in c)
    names: list[str] = []
    for group, count in zip(groups, counts, strict=True):
        scored = sorted(
            count, key=lambda w: (-count[w] / len(group) * math.log(1 + len(groups) / spread[w]), w)
        )
        base = "_".join(scored[:2]) or "tools"
        name, n = base, 2
        while name in names:
            name, n = f"{base}_{n}", n + 1
        names.append(name[:64])
    return names


def suggest_scopes(
    specs: Sequence[ToolSpec],
    n: int,
    *,
    embeddings: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[list[tuple[str, list[str]]], str]:
    """`n` suggested scopes over `specs` as `[(name, [tool names])]`, largest first, and a
    label of the vectors used (`embeddings=False`: TF-IDF only)."""
    vectors = _dense_vectors(specs, progress) if embeddings else None
    how = "MiniLM embeddings of the tool text (the gate's encoder)"
    if vectors is None:
        vectors, how = _lexical_vectors(specs), "TF-IDF of the tool names and descriptions"
    labels = kmeans(vectors, n)
    groups: list[list[ToolSpec]] = [[] for _ in range(int(labels.max()) + 1)]
    for spec, label in zip(specs, labels, strict=True):
        groups[int(label)].append(spec)
    groups = sorted((g for g in groups if g), key=lambda g: (-len(g), g[0].name))
    names = name_clusters(groups)
    return [(name, [s.name for s in g]) for name, g in zip(names, groups, strict=True)], how
