"""Rankers: score every tool of a catalog against an intent (dense, BM25, or their fusion).

The shipped default, chosen by measurement on real labelled data (see README, "Gating"), is
`HybridRanker`: 0.65 x min-max(cosine of MiniLM vectors) + 0.35 x min-max(BM25), both over the
tool text `full` (split name, description, parameter names, descriptions and enum values).
Min-max is taken over the candidates of the call, so scores are comparable within a call only.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from attention_scoping.core.text import Representation, tool_text
from attention_scoping.core.tool import ToolSpec
from attention_scoping.gating.bm25 import BM25Index
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import (
    Encoder,
    EncoderUnavailableError,
    HashingEncoder,
    LangChainEncoder,
    shared_minilm,
)

logger = logging.getLogger(__name__)

DEFAULT_ALPHA = 0.65
"""Weight of the dense score in the hybrid (the middle of the measured 0.6-0.7 plateau)."""

FAISS_MIN_TOOLS = 20_000
"""Below this many tools a numpy matrix product beats FAISS; above it FAISS is used if installed."""


@runtime_checkable
class Ranker(Protocol):
    """Scores the tools of a fitted catalog against a query (higher = more relevant)."""

    @property
    def name(self) -> str:
        """Short name for reports (e.g. 'hybrid(minilm, bm25)')."""
        ...

    def fit(self, specs: Sequence[ToolSpec]) -> None:
        """Index `specs` (replacing any previous catalog)."""
        ...

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Scores of the fitted tools at `rows` (all when None), aligned with `rows`."""
        ...


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; constant input maps to zeros (no evidence either way)."""
    if values.size == 0:
        return values.astype(np.float32)
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - low) / (high - low)).astype(np.float32)


class BM25Ranker:
    """Okapi BM25 over tool texts: no model, sub-millisecond, the fallback of everything."""

    def __init__(self, representation: Representation = "full") -> None:
        """`representation`: which tool text to index (see `gating.text.Representation`)."""
        self.representation: Representation = representation
        self._index: BM25Index | None = None

    @property
    def name(self) -> str:
        """'bm25'."""
        return "bm25"

    def fit(self, specs: Sequence[ToolSpec]) -> None:
        """Build the BM25 index."""
        self._index = BM25Index([tool_text(s, self.representation) for s in specs])

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """BM25 scores."""
        if self._index is None:
            msg = "BM25Ranker.fit() must be called before scores()"
            raise RuntimeError(msg)
        values = self._index.scores(query)
        return values if rows is None else values[rows]


class DenseRanker:
    """Cosine similarity of sentence vectors (tool vectors cached on disk by content hash)."""

    def __init__(
        self,
        encoder: Encoder,
        representation: Representation = "full",
        cache: VectorCache | None = None,
    ) -> None:
        """`encoder`: any `Encoder`; `cache`: where tool vectors persist (default location)."""
        self.encoder = encoder
        self.representation: Representation = representation
        self.cache = cache if cache is not None else VectorCache()
        self._matrix: np.ndarray | None = None
        self._faiss: object | None = None
        self._query_lock = threading.Lock()
        self._last_query: tuple[str, np.ndarray] | None = None

    @property
    def name(self) -> str:
        """'dense(<encoder id>)'."""
        return f"dense({self.encoder.id})"

    def fit(self, specs: Sequence[ToolSpec]) -> None:
        """Vectors of every tool: cached ones read back, new ones embedded and stored."""
        texts = [tool_text(s, self.representation) for s in specs]
        self._matrix = self.cache.vectors(self.encoder, texts) if texts else None
        self._faiss = _faiss_index(self._matrix) if self._matrix is not None else None

    def query_vector(self, query: str) -> np.ndarray:
        """The intent's vector (the last one is memoized: a call and its retry share it)."""
        with self._query_lock:
            if self._last_query is not None and self._last_query[0] == query:
                return self._last_query[1]
        vector = self.encoder.encode([query])[0]
        with self._query_lock:
            self._last_query = (query, vector)
        return vector

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Cosine similarities in [-1, 1]."""
        if self._matrix is None:
            return np.zeros(0 if rows is None else len(rows), dtype=np.float32)
        vector = self.query_vector(query)
        if rows is None and self._faiss is not None:
            return _faiss_scores(self._faiss, vector, len(self._matrix))
        matrix = self._matrix if rows is None else self._matrix[rows]
        return matrix @ vector


class HybridRanker:
    """`alpha` x min-max(dense) + (1 - alpha) x min-max(BM25), over the candidates of a call."""

    def __init__(
        self,
        dense: DenseRanker,
        lexical: BM25Ranker | None = None,
        *,
        alpha: float = DEFAULT_ALPHA,
    ) -> None:
        """Fuse `dense` with `lexical` (default: BM25 over the same representation)."""
        if not 0.0 <= alpha <= 1.0:
            msg = f"alpha must be within [0, 1], not {alpha}"
            raise ValueError(msg)
        self.dense = dense
        self.lexical = lexical if lexical is not None else BM25Ranker(dense.representation)
        self.alpha = alpha

    @property
    def name(self) -> str:
        """'hybrid(<dense>, bm25, alpha)'."""
        return f"hybrid({self.dense.name}, {self.lexical.name}, alpha={self.alpha:g})"

    def fit(self, specs: Sequence[ToolSpec]) -> None:
        """Fit both rankers."""
        self.dense.fit(specs)
        self.lexical.fit(specs)

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Fused scores in [0, 1]; the best candidate of a query with any signal scores ~1."""
        dense = minmax(self.dense.scores(query, rows))
        lexical = minmax(self.lexical.scores(query, rows))
        return self.alpha * dense + (1.0 - self.alpha) * lexical


FAISS_DEPTH = 1000
"""With FAISS, how many nearest tools get an exact score; the rest share the lowest of them."""


def _faiss_index(matrix: np.ndarray) -> object | None:
    """An HNSW inner-product index for very large catalogs, when faiss is installed."""
    if len(matrix) < FAISS_MIN_TOOLS:
        return None
    try:
        import faiss
    except ImportError:
        return None
    index = faiss.IndexHNSWFlat(matrix.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efSearch = 2 * FAISS_DEPTH
    index.add(np.ascontiguousarray(matrix, dtype=np.float32))
    return index


def _faiss_scores(index: object, vector: np.ndarray, size: int) -> np.ndarray:
    """Scores of the `FAISS_DEPTH` nearest tools; the others get the lowest of those scores."""
    depth = min(FAISS_DEPTH, size)
    found, ids = index.search(vector[None, :].astype(np.float32), depth)  # type: ignore[attr-defined]
    valid = ids[0] >= 0
    out = np.full(size, float(found[0][valid].min()) if valid.any() else 0.0, dtype=np.float32)
    out[ids[0][valid]] = found[0][valid]
    return out


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the `k` best scores, best first (ties keep catalog order)."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(-scores, kind="stable")
    return order[:k]


RankerSpec = Ranker | Encoder | Any | str
"""What `build_ranker` accepts: a Ranker, an Encoder, a LangChain Embeddings, or a name."""

RANKER_NAMES = ("default", "hybrid", "dense", "bm25", "hashing")


def build_ranker(spec: RankerSpec = "default", cache: VectorCache | None = None) -> Ranker:
    """A ranker from a name or an object.

    - `"default"`: the MiniLM + BM25 hybrid; when the `gate` extra is not installed, BM25 alone
      (a warning says so).
    - `"hybrid"` / `"dense"`: the same with MiniLM, failing loudly without the `gate` extra.
    - `"bm25"`: lexical only. `"hashing"`: hybrid over a model-free hashing encoder.
    - an `Encoder` or a LangChain `Embeddings`: hybrid over that encoder.
    - a `Ranker`: used as is.

    Raises:
        ValueError: an unknown name or object.
        EncoderUnavailableError: `"hybrid"`/`"dense"` without the `gate` extra.
    """
    if isinstance(spec, str):
        if spec == "bm25":
            return BM25Ranker()
        if spec == "hashing":
            return HybridRanker(DenseRanker(HashingEncoder(), cache=cache))
        if spec in ("default", "hybrid", "dense"):
            try:
                encoder = shared_minilm()  # one per process: loads once, surfaces a missing extra
            except EncoderUnavailableError as exc:
                if spec != "default":
                    raise
                logger.warning("gating falls back to BM25 only: %s", exc)
                return BM25Ranker()
            dense = DenseRanker(encoder, cache=cache)
            return dense if spec == "dense" else HybridRanker(dense)
        msg = f"unknown ranker {spec!r}; valid: {', '.join(RANKER_NAMES)}"
        raise ValueError(msg)
    if isinstance(spec, Ranker):
        return spec
    if isinstance(spec, Encoder):
        return HybridRanker(DenseRanker(spec, cache=cache))
    if hasattr(spec, "embed_query") and hasattr(spec, "embed_documents"):
        return HybridRanker(DenseRanker(LangChainEncoder(spec), cache=cache))
    msg = f"ranker must be a name ({', '.join(RANKER_NAMES)}), a Ranker, an Encoder or Embeddings"
    raise ValueError(msg)
