"""Embed a catalog's tool vectors ahead of the gate, in batches, so a progress bar can follow.

The gate embeds every new tool when it is fitted, in one call with no progress report; on a
first run over a thousand tools that is a silent half minute. Embedding the same texts through
the same `VectorCache` first, batch by batch, fills the cache the gate then reads from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attention_scoping.core.tool import ToolSpec

BATCH = 32
"""Tools embedded per progress step."""

Progress = Callable[[str, int, int], None]
"""`progress(description, done, total)`: called as work advances."""


def dense_rankers(ranker: Any) -> list[Any]:
    """The `DenseRanker`s inside `ranker` (itself, or the dense half of a hybrid)."""
    from attention_scoping.gating.ranking import DenseRanker, HybridRanker

    if isinstance(ranker, DenseRanker):
        return [ranker]
    if isinstance(ranker, HybridRanker):
        return dense_rankers(ranker.dense)
    return []


def warm_vectors(ranker: Any, specs: Sequence[ToolSpec], progress: Progress | None = None) -> int:
    """Make sure the vectors of `specs` are cached for `ranker`; returns how many were embedded.

    Texts come from the ranker's own representation, so the gate finds them in its cache.
    """
    from attention_scoping.core.text import tool_text

    embedded = 0
    for dense in dense_rankers(ranker):
        texts = [tool_text(s, dense.representation) for s in specs]
        label = f"embedding {len(texts):,} tools ({dense.encoder.id})"
        before = dense.cache.misses
        for start in range(0, len(texts), BATCH):
            dense.cache.vectors(dense.encoder, texts[start : start + BATCH])
            if progress is not None:
                progress(label, min(start + BATCH, len(texts)), len(texts))
        embedded += dense.cache.misses - before
    return embedded
