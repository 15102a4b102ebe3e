"""Embed a catalog's tool vectors ahead of the gate, in batches, so a progress bar can follow.

The gate embeds every new tool when it is fitted, in one call with no progress report; on a
first run over a thousand tools that is a silent half minute. Embedding the same texts through
the same `VectorCache` first, batch by batch, fills the cache the gate then reads from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from attention_scoping.common.tool import ToolSpec

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
    from attention_scoping.common.text import tool_text

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


class MemoEncoder:
    """Wraps an encoder for a benchmark run: every text is embedded once and reused by every
    method, and the time each text took is remembered so reused vectors can still be charged
    to a decision's latency (`charged_ms`), as if that method had embedded the query itself."""

    def __init__(self, encoder: Any) -> None:
        """`encoder`: the encoder to wrap (its `id` is kept: cache keys do not change)."""
        self.encoder = encoder
        self._vectors: dict[str, Any] = {}
        self._cost_ms: dict[str, float] = {}
        self.fresh_ms = 0.0
        """Time actually spent embedding in this process."""
        self.charged_ms = 0.0
        """Embedding time of every text requested, fresh or reused."""

    @property
    def id(self) -> str:
        """The wrapped encoder's id."""
        return str(self.encoder.id)

    def encode(self, texts: Sequence[str]) -> Any:
        """Vectors of `texts` (a numpy array); unseen ones embedded in one call of the wrapped
        encoder."""
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            started = time.perf_counter()
            fresh = self.encoder.encode(missing)
            spent = (time.perf_counter() - started) * 1000.0
            self.fresh_ms += spent
            for text, vector in zip(missing, fresh, strict=True):
                self._vectors[text] = vector
                self._cost_ms[text] = spent / len(missing)
        self.charged_ms += sum(self._cost_ms[t] for t in dict.fromkeys(texts))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])
