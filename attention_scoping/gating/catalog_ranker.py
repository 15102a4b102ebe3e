"""`default_ranker()`: the gate's ranking as a plain `(query, entries) -> [(name, score)]` callable.

The gateway (`ToolGateway.search_tool_catalog`) and scope pre-selection use it, so search and
gating rank with one implementation. Tools the query names exactly come first, whatever their
score (see `gating.exact`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_scoping.common.tool import ToolSpec
from attention_scoping.gating.exact import ExactNames
from attention_scoping.gating.ranking import Ranker, RankerSpec, build_ranker

if TYPE_CHECKING:
    from attention_scoping.gating.cache import VectorCache
    from attention_scoping.gating.encoders import Encoder


def raised(scores: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """`scores` with the rows named exactly raised to at least 1 and at least the best score
    (a float64 copy when any is; `scores` itself otherwise)."""
    if not exact.size:
        return scores
    scores = scores.astype(np.float64, copy=True)
    scores[exact] = max(1.0, float(scores.max()))
    return scores


def ranked_rows(rows: np.ndarray, scores: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """`rows` in the order `exact_first` gives them: best first over `raised` scores, rows
    named exactly before others of the same score, ties in row order."""
    named = np.zeros(scores.size, dtype=bool)
    named[exact] = True
    return rows[np.lexsort((rows, ~named[rows], -scores[rows]))]


def exact_first(scores: np.ndarray, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, scores): rows named exactly first (in row order, scored at least 1 and at least
    the best score), then the others best first, ties in row order."""
    if not exact.size:
        return np.argsort(-scores, kind="stable"), scores
    scores = raised(scores, exact)
    rest = np.ones(scores.size, dtype=bool)
    rest[exact] = False
    others = np.flatnonzero(rest)
    order = others[np.argsort(-scores[others], kind="stable")]
    return np.concatenate([exact, order]), scores


class CatalogRanker:
    """Ranks any objects with `name`, `description` and `parameters` against a query.

    The underlying ranker is refitted only when the list of entries changes (tool vectors come
    from the on-disk cache, so a refit embeds only new tools).

    Example:
        ```python
        rank = default_ranker()
        rank("remind me tomorrow", gateway_entries)  # [("scheduled_jobs", 1.0), ...]
        ```
    """

    def __init__(
        self,
        ranker: RankerSpec = "default",
        *,
        cache: VectorCache | None = None,
        encoder: Encoder | None = None,
    ) -> None:
        """`ranker`: anything `build_ranker` accepts (default: the MiniLM + BM25 hybrid);
        `cache`, `encoder`: as for `build_ranker`."""
        self.ranker: Ranker = build_ranker(ranker, cache, encoder=encoder)
        self.__name__ = f"gating:{self.ranker.name}"
        self._entries: list[Any] = []
        self._key: tuple[int, ...] = ()
        self._given: tuple[Any, ...] | None = None
        self._names: np.ndarray = np.zeros(0, dtype=object)
        self._exact = ExactNames([])
        self._lock = threading.Lock()

    def _fit(self, entries: Sequence[Any], key: tuple[int, ...]) -> None:
        specs = [
            ToolSpec(str(e.name), str(e.name), str(e.description), dict(e.parameters or {}))
            for e in entries
        ]
        self.ranker.fit(specs)
        names = [s.name for s in specs]
        self._names = np.asarray(names, dtype=object)
        self._exact = ExactNames(names)
        self._entries = list(entries)  # held, so their ids cannot be reused while keyed
        self._key = key

    def _fitted(self, entries: Sequence[Any]) -> None:
        """Fit over `entries` unless they are the entries fitted (a tuple is recognised by
        identity, any other sequence by the ids of its entries). Call with the lock held."""
        if isinstance(entries, tuple) and entries is self._given:
            return
        key = tuple(map(id, entries))
        if key != self._key:
            self._fit(entries, key)
        self._given = entries if isinstance(entries, tuple) else None

    def scored(self, query: str, entries: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(scores, exact): every entry's score for `query` (rows named exactly `raised`), and
        the rows named exactly; what `__call__` orders, for callers that select with arrays."""
        with self._lock:
            self._fitted(entries)
            if not len(self._names):
                return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
            exact = self._exact.rows(query)
            return raised(self.ranker.scores(query), exact), exact

    def __call__(self, query: str, entries: Sequence[Any]) -> list[tuple[str, float]]:
        """(name, score) for every entry, best first; entries named exactly lead."""
        with self._lock:
            self._fitted(entries)
            if not len(self._names):
                return []
            order, scores = exact_first(self.ranker.scores(query), self._exact.rows(query))
            names = self._names
        return list(zip(names[order].tolist(), scores[order].tolist(), strict=True))


def default_ranker() -> CatalogRanker:
    """The package's default ranking (hybrid MiniLM + BM25; BM25 alone without the gate extra)."""
    return CatalogRanker("default")
