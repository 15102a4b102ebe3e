"""Best-first orders over score arrays, computed only as far as they are read.

A gate decision over 20,000 tools reads its top few ranks; sorting every score and building a
(name, score) pair per tool in Python cost more than the scoring itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

__all__ = ["Ranking", "top_rows"]


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the `k` best scores, best first (ties keep catalog order): the first `k` of
    a stable descending sort, without sorting the rest when `k` is small."""
    size = scores.size
    if k <= 0 or size == 0:
        return np.zeros(0, dtype=np.int64)
    if k * 8 >= size:
        return np.argsort(-scores, kind="stable")[:k]
    cut = scores[np.argpartition(-scores, k - 1)[:k]].min()
    above = np.flatnonzero(scores > cut)
    ties = np.flatnonzero(scores == cut)[: k - above.size]
    rows = np.concatenate([above, ties])
    return rows[np.lexsort((rows, -scores[rows]))]


class Ranking(Sequence[tuple[str, float]]):
    """(name, score) pairs best first (ties in the given order), built only as far as they are
    read: a decision over 20,000 tools reads its top few, not 20,000 pairs."""

    def __init__(self, names: Sequence[str], scores: np.ndarray) -> None:
        """`names[i]` scored `scores[i]`."""
        self._names = names
        self._scores = np.asarray(scores, dtype=np.float64)
        self._order = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        """How many names are ranked."""
        return len(self._names)

    def _rows(self, count: int) -> np.ndarray:
        """The rows of the `count` best, best first (computed once per larger `count`)."""
        if count > self._order.size:
            self._order = top_rows(self._scores, max(count, 2 * self._order.size))
        return self._order[:count]

    def _pairs(self, rows: np.ndarray) -> list[tuple[str, float]]:
        names = self._names
        return [
            (names[i], v) for i, v in zip(rows.tolist(), self._scores[rows].tolist(), strict=True)
        ]

    @overload
    def __getitem__(self, index: int) -> tuple[str, float]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, float]]: ...

    def __getitem__(self, index: int | slice) -> tuple[str, float] | list[tuple[str, float]]:
        """The pair at a rank (0 = best), or a list of pairs for a slice."""
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            return self._pairs(self._rows(stop)[start:stop:step]) if stop > start else []
        position = range(len(self))[index]
        return self._pairs(self._rows(position + 1)[position:])[0]

    def __iter__(self) -> Iterator[tuple[str, float]]:
        """Every pair, best first."""
        return iter(self[:])
