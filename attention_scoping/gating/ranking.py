"""Rankers: score every tool of a catalog against an intent (dense, BM25, or their fusion).

The shipped default, chosen by measurement on real labelled data (see README, "Gating"), is
`HybridRanker`: 0.65 x min-max(cosine of MiniLM vectors) + 0.35 x min-max(BM25), both over the
tool text `full` (split name, description, parameter names, descriptions and enum values).
Min-max is taken over the candidates of the call, so scores are comparable within a call only.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from attention_scoping.common.text import Representation, tool_text
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gating.bm25 import BM25Index
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import (
    Encoder,
    EncoderUnavailableError,
    HashingEncoder,
    LangChainEncoder,
    shared_minilm,
)
from attention_scoping.gating.errors import GateConfigError
from attention_scoping.gating.exact import ExactNames, exact_mask
from attention_scoping.gating.intents import split_intents
from attention_scoping.gating.order import top_rows as top_rows  # re-exported

logger = logging.getLogger(__name__)

DEFAULT_ALPHA = 0.65
"""Weight of the dense score in the hybrid (the middle of the measured 0.6-0.7 plateau)."""


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


def fuse(
    dense: np.ndarray, lexical: np.ndarray, *, alpha: float = DEFAULT_ALPHA, coverage: float = 1.0
) -> np.ndarray:
    """`(1 - w)` x min-max(dense) + `w` x min-max(lexical), with `w = (1 - alpha) x coverage`:
    the lexical share shrinks when the best lexical match explains little of the request."""
    weight = (1.0 - alpha) * min(max(coverage, 0.0), 1.0)
    return (1.0 - weight) * minmax(dense) + weight * minmax(lexical)


class _Memo:
    """A small LRU of computed values keyed by text (query vectors, per-text scores)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


MEMO_SIZE = 64
"""Query texts whose vectors and scores a ranker remembers (a call, its retries, other k)."""

_QUERY_VECTORS: weakref.WeakKeyDictionary[Any, _Memo] = weakref.WeakKeyDictionary()
_QUERY_VECTORS_LOCK = threading.Lock()


def query_memo(encoder: Encoder) -> _Memo:
    """The memo of query vectors of `encoder`, shared by every ranker that uses it: scope
    pre-selection and the gate embed one user message once per process, not once each."""
    with _QUERY_VECTORS_LOCK:
        try:
            memo = _QUERY_VECTORS.get(encoder)
            if memo is None:
                memo = _QUERY_VECTORS[encoder] = _Memo(MEMO_SIZE)
        except TypeError:  # an encoder that cannot be a weak key keeps a memo of its own
            memo = _Memo(MEMO_SIZE)
        return memo


class BM25Ranker:
    """Okapi BM25 over tool texts: no model, sub-millisecond, the fallback of everything.

    Like `HybridRanker`, a tool the request names exactly (`gating.exact`) ranks first: it
    scores above every other tool (at least 1), so the fallback without the `gate` extra
    keeps the tools the user named.
    """

    def __init__(
        self, representation: Representation = "full", *, exact_names: bool = True
    ) -> None:
        """`representation`: which tool text to index (see `core.text.Representation`);
        `exact_names`: tools the request names exactly score above every other one."""
        self.representation: Representation = representation
        self.exact_names = exact_names
        self._index: BM25Index | None = None
        self._texts: list[str] | None = None
        self._memo = _Memo(MEMO_SIZE)
        self._exact = ExactNames([])

    @property
    def name(self) -> str:
        """'bm25'."""
        return "bm25"

    def fit(self, specs: Sequence[ToolSpec]) -> None:
        """Build the BM25 index (kept as is when the tool texts did not change)."""
        texts = [tool_text(s, self.representation) for s in specs]
        self._exact = ExactNames([s.name for s in specs])
        if texts != self._texts:
            self._index = BM25Index(texts)
            self._texts = texts
            self._memo.clear()

    @property
    def index(self) -> BM25Index:
        """The fitted index."""
        if self._index is None:
            msg = "BM25Ranker.fit() must be called before scores()"
            raise GateConfigError(msg)
        return self._index

    def all_scores(self, text: str) -> tuple[np.ndarray, float]:
        """BM25 scores of every tool for `text`, and the coverage of its best match."""
        found = self._memo.get(text)
        if found is None:
            values = self.index.scores(text)
            found = (values, self.index.coverage(text, values))
            self._memo.put(text, found)
        return found

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """BM25 scores; a tool the query names exactly scores above all others (`exact_names`)."""
        values = self.all_scores(query)[0]
        values = values if rows is None else values[rows]
        return named_above(values, self._exact.rows(query), rows) if self.exact_names else values


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
        self._texts: list[str] | None = None
        self._memo = query_memo(encoder)
        self._gathered: tuple[np.ndarray, np.ndarray] | None = None
        """(rows, the matrix's rows at them) of the last call: the gate asks for the same
        candidate rows (the same array, `ToolIndex.rows`) on every call of a tool list."""

    @property
    def name(self) -> str:
        """'dense(<encoder id>)'."""
        return f"dense({self.encoder.id})"

    def fit(self, specs: Sequence[ToolSpec]) -> None:
        """Vectors of every tool: cached ones read back, new ones embedded and stored."""
        texts = [tool_text(s, self.representation) for s in specs]
        if texts == self._texts:
            return
        self._matrix = self.cache.vectors(self.encoder, texts) if texts else None
        self._texts = texts
        self._gathered = None

    def query_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts`, the unseen ones embedded in one encoder call (memoized)."""
        found = [self._memo.get(t) for t in texts]
        missing = [t for t, v in zip(texts, found, strict=True) if v is None]
        if missing:
            fresh = dict(
                zip(missing, self.encoder.encode(list(dict.fromkeys(missing))), strict=False)
            )
            for text, vector in fresh.items():
                self._memo.put(text, vector)
            found = [v if v is not None else fresh[t] for t, v in zip(texts, found, strict=True)]
        return np.stack(found) if found else np.zeros((0, 0), dtype=np.float32)

    def similarities(self, vectors: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Cosine of each query vector (rows of `vectors`) with the tools at `rows`."""
        if self._matrix is None:
            return np.zeros((len(vectors), 0 if rows is None else len(rows)), dtype=np.float32)
        return vectors @ self._rows_of(self._matrix, rows).T

    def _rows_of(self, matrix: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """`matrix[rows]`, copied once per rows array rather than per call (at 5,000 tools the
        copy cost the gate more than scoring; the product is the same, bit for bit)."""
        if rows is None:
            return matrix
        held = self._gathered
        if held is not None and held[0] is rows:
            return held[1]
        gathered = matrix[rows]
        self._gathered = (rows, gathered)
        return gathered

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Cosine similarities in [-1, 1]."""
        return self.similarities(self.query_vectors([query]), rows)[0]


PART_WEIGHT = 0.9
"""Weight of a part's scores against the whole request's when merging (see `HybridRanker`)."""

CONFIDENT_COSINE = 0.25
"""Best raw cosine at or above which a request is taken to be served by some tool. Short
requests score lower than long ones: 0.25 is about the 3rd percentile of short single-intent
requests over 150-250-tool catalogs (`benchmarks/search_quality.py`, tuning half), where 0.3
was the 10th and cut their tools below k; small talk scores 0.13-0.33."""

RELEVANCE_THRESHOLD = 0.5
"""The gate's default threshold over calibrated hybrid scores: no recall@5 lost on either dev
set, 6-13 % fewer tools sent, and a request no tool serves gets few or none."""


class HybridRanker:
    """Dense and BM25 scores fused per text, merged over the parts of a multi-part request.

    Each text (the whole request, and each part when `split_intents` finds several) gets
    `fuse(dense, bm25, alpha)` over the candidates, so its best tool scores 1. A tool's score is
    the larger of its score for the whole request and `part_weight` x its best score for a part:
    a three-step request gets a tool per step, while a part that only sets context ("I'm
    planning a trip.") cannot push the whole request's best tools out.

    Measured on the BFCL and Seal-Tools dev splits (docs/gating.md): parts take Seal-Tools
    recall@5 from 0.822 to 0.952 and leave BFCL at 0.931 (0.929 without).
    """

    def __init__(
        self,
        dense: DenseRanker,
        lexical: BM25Ranker | None = None,
        *,
        alpha: float = DEFAULT_ALPHA,
        multi_intent: bool = True,
        part_weight: float = PART_WEIGHT,
        adaptive: bool = False,
        confident_cosine: float | None = CONFIDENT_COSINE,
        exact_names: bool = True,
    ) -> None:
        """Fuse `dense` with `lexical` (default: BM25 over the same representation).

        Args:
            dense: The dense ranker.
            lexical: The lexical ranker (default BM25 over the same tool text).
            alpha: Weight of the dense score (1 - alpha: the lexical one).
            multi_intent: Also rank each part of a multi-part request.
            part_weight: A part's weight against the whole request (0-1).
            adaptive: Scale the lexical weight by how much of the text the best BM25 match
                explains (measured: no gain on either dev set, so off by default).
            confident_cosine: Calibration: when the best raw cosine of the request (or a part)
                over the candidates is below this, every score is scaled by best / this, so
                the gate's threshold (`default_threshold`) drops tools for a request no tool
                serves. None: scores stay relative to the best candidate.
            exact_names: A tool the request names exactly (`gating.exact`) scores 1, the
                top of the scale, and every other tool less, so no threshold within [0, 1]
                and no k >= 1 can leave it out.
        """
        if not 0.0 <= alpha <= 1.0 or not 0.0 <= part_weight <= 1.0:
            msg = f"alpha and part_weight must be within [0, 1], not {alpha}, {part_weight}"
            raise GateConfigError(msg)
        self.dense = dense
        self.lexical = lexical if lexical is not None else BM25Ranker(dense.representation)
        self.alpha = alpha
        self.multi_intent = multi_intent
        self.part_weight = part_weight
        self.adaptive = adaptive
        self.confident_cosine = confident_cosine
        self.exact_names = exact_names
        self._exact = ExactNames([])
        self._memo = _Memo(8)

    @property
    def default_threshold(self) -> float:
        """The gate threshold that suits these scores (used when the gate is given none)."""
        return RELEVANCE_THRESHOLD if self.confident_cosine else 0.0

    @property
    def name(self) -> str:
        """'hybrid(<dense>, bm25, alpha=…[, parts=…][, adaptive])'."""
        flags = f", parts={self.part_weight:g}" if self.multi_intent else ""
        flags += ", adaptive" if self.adaptive else ""
        return f"hybrid({self.dense.name}, {self.lexical.name}, alpha={self.alpha:g}{flags})"

    def fit(self, specs: Sequence[ToolSpec]) -> None:
        """Fit both rankers."""
        self.dense.fit(specs)
        self.lexical.fit(specs)
        self._exact = ExactNames([s.name for s in specs])
        self._memo.clear()

    def texts(self, query: str) -> list[str]:
        """The texts ranked for `query`: itself, plus its parts when it has several."""
        if not self.multi_intent:
            return [query]
        parts = split_intents(query)
        return [query, *parts] if len(parts) > 1 else [query]

    def _similarities(self, texts: Sequence[str], rows: np.ndarray | None) -> np.ndarray:
        """Cosine rows of `texts` (the request, then its parts). With parts, only the parts are
        embedded: the request's row is their word-weighted mean, as mean pooling over the whole
        text would roughly give (measured: equal or better recall than embedding it too, for
        half the encoder time)."""
        if len(texts) == 1:
            return self.dense.similarities(self.dense.query_vectors(texts), rows)
        parts = self.dense.similarities(self.dense.query_vectors(texts[1:]), rows)
        weights = np.asarray([max(len(t.split()), 1) for t in texts[1:]], dtype=np.float32)
        whole = (weights / weights.sum()) @ parts
        return np.vstack([whole[None, :], parts])

    def fuse_text(self, dense: np.ndarray, lexical: np.ndarray, coverage: float) -> np.ndarray:
        """One text's fused scores over the candidates, best 1 (benchmarks override this to
        measure other fusions under the same parts, calibration and exact names)."""
        return fuse(dense, lexical, alpha=self.alpha, coverage=coverage if self.adaptive else 1.0)

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Fused scores in [0, 1]; the whole request's best candidate scores 1 unless no
        candidate is close to the request (see `confident_cosine`)."""
        key = (query, None if rows is None else rows.tobytes())
        found = self._memo.get(key)
        if found is not None:
            return found
        texts = self.texts(query)
        dense = self._similarities(texts, rows)
        fused = []
        for text, similarity in zip(texts, dense, strict=True):
            lexical, coverage = self.lexical.all_scores(text)
            fused.append(
                self.fuse_text(similarity, lexical if rows is None else lexical[rows], coverage)
            )
        result = fused[0]
        if len(fused) > 1:
            result = np.maximum(result, self.part_weight * np.max(np.stack(fused[1:]), axis=0))
        if self.confident_cosine and dense.size:
            result = result * min(1.0, float(dense.max()) / self.confident_cosine)
        if self.exact_names:
            result = named_first(result, self._exact.rows(query), rows)
        self._memo.put(key, result)
        return result


NAMED_SCORE = 1.0
"""The score of a tool the request names exactly; every other tool scores below it."""


def named_first(scores: np.ndarray, exact: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """`scores` with the tools at catalog rows `exact` (where scored) raised to `NAMED_SCORE`
    and every other one kept just below it."""
    if not exact.size:
        return scores
    mask = exact_mask(exact, rows, scores.size)
    if not mask.any():
        return scores
    below = np.nextafter(np.float32(NAMED_SCORE), np.float32(0.0))
    out = np.minimum(scores, below).astype(np.float32)
    out[mask] = NAMED_SCORE
    return out


def named_above(scores: np.ndarray, exact: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """Unbounded `scores` (BM25's) with the tools at catalog rows `exact` (where scored) raised
    just above the best other score and at least to `NAMED_SCORE`; the others unchanged."""
    if not exact.size or not scores.size:
        return scores
    mask = exact_mask(exact, rows, scores.size)
    if not mask.any():
        return scores
    best = float(scores[~mask].max()) if (~mask).any() else 0.0
    out = scores.astype(np.float64, copy=True)
    out[mask] = np.nextafter(max(NAMED_SCORE, best), np.inf)
    return out


RankerSpec = Ranker | Encoder | Any | str
"""What `build_ranker` accepts: a Ranker, an Encoder, a LangChain Embeddings, or a name."""

RANKER_NAMES = ("default", "hybrid", "dense", "bm25", "hashing")


def build_ranker(
    spec: RankerSpec = "default",
    cache: VectorCache | None = None,
    *,
    encoder: Encoder | None = None,
) -> Ranker:
    """A ranker from a name or an object.

    - `"default"`: the MiniLM + BM25 hybrid (adaptive fusion, multi-intent); when the `gate`
      extra is not installed, BM25 alone (a warning says so).
    - `"hybrid"` / `"dense"`: the same with MiniLM, failing loudly without the `gate` extra.
    - `"bm25"`: lexical only. `"hashing"`: hybrid over a model-free hashing encoder.
    - an `Encoder` or a LangChain `Embeddings`: hybrid over that encoder.
    - a `Ranker`: used as is.

    `encoder` replaces MiniLM for the names `"default"`, `"hybrid"` and `"dense"` (benchmarks
    pass one shared encoder to several rankers).

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
            if encoder is None:
                try:
                    encoder = shared_minilm()  # one per process; surfaces a missing extra
                except EncoderUnavailableError as exc:
                    if spec != "default":
                        raise
                    logger.warning("gating falls back to BM25 only: %s", exc)
                    return BM25Ranker()
            dense = DenseRanker(encoder, cache=cache)
            return dense if spec == "dense" else HybridRanker(dense)
        msg = f"unknown ranker {spec!r}; valid: {', '.join(RANKER_NAMES)}"
        raise GateConfigError(msg)
    if isinstance(spec, Ranker):
        return spec
    if isinstance(spec, Encoder):
        return HybridRanker(DenseRanker(spec, cache=cache))
    if hasattr(spec, "embed_query") and hasattr(spec, "embed_documents"):
        return HybridRanker(DenseRanker(LangChainEncoder(spec), cache=cache))
    msg = f"ranker must be a name ({', '.join(RANKER_NAMES)}), a Ranker, an Encoder or Embeddings"
    raise GateConfigError(msg)
