"""`default_ranker()`: the gate's ranking as a plain `(query, entries) -> [(name, score)]` callable.

The gateway (`ToolGateway.search_tool_catalog`) and other catalog searches use it, so search and
gating rank with one implementation.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from attention_scoping.core.tool import ToolSpec
from attention_scoping.gating.ranking import Ranker, RankerSpec, build_ranker, top_rows


class CatalogRanker:
    """Ranks any objects with `name`, `description` and `parameters` against a query.

    The underlying ranker is refitted only when the set of entries changes (tool vectors come
    from the on-disk cache, so a refit embeds only new tools).

    Example:
        ```python
        rank = default_ranker()
        rank("remind me tomorrow", gateway_entries)  # [("scheduled_jobs", 1.0), ...]
        ```
    """

    def __init__(self, ranker: RankerSpec = "default") -> None:
        """`ranker`: anything `build_ranker` accepts (default: the MiniLM + BM25 hybrid)."""
        self.ranker: Ranker = build_ranker(ranker)
        self.__name__ = f"gating:{self.ranker.name}"
        self._key: tuple[tuple[str, int], ...] = ()
        self._names: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, query: str, entries: Sequence[Any]) -> list[tuple[str, float]]:
        """(name, score) for every entry, best first."""
        key = tuple((str(e.name), id(e)) for e in entries)
        with self._lock:
            if key != self._key:
                specs = [
                    ToolSpec(str(e.name), str(e.name), str(e.description), dict(e.parameters or {}))
                    for e in entries
                ]
                self.ranker.fit(specs)
                self._key, self._names = key, [s.name for s in specs]
            if not self._names:
                return []
            scores = self.ranker.scores(query)
            names = list(self._names)
        return [(names[i], float(scores[i])) for i in top_rows(scores, len(names))]


def default_ranker() -> CatalogRanker:
    """The package's default ranking (hybrid MiniLM + BM25; BM25 alone without the gate extra)."""
    return CatalogRanker("default")
