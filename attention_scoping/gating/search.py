"""The client-side search tool of the native disclosure modes: our ranker behind the
provider's deferral. What it finds is disclosed in its result (`tool_reference` blocks for
Anthropic), so it becomes callable without the tools array changing.

Fail closed (`attention_scoping.risk`): the ranking is code deciding for the model, so the gate
searches declared reads only (the names it passes); a tool that is not one is never loaded or
named by a search.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attention_scoping.errors import render_payload
from attention_scoping.gating.exact import ExactNames
from attention_scoping.gating.index import ToolIndex


def search_tools(
    index: ToolIndex,
    query: str,
    names: Sequence[str],
    *,
    k: int,
    threshold: float,
) -> list[str]:
    """The tools to load for `query` over indexed `names` (declared reads: the caller's
    choice): those the query names exactly first, then the `k` best ranked above
    `threshold`."""
    if not names or not query.strip():
        return []
    exact = [names[i] for i in ExactNames(names).rows(query)]
    scores = np.asarray(index.scores(query, list(names)), dtype=np.float64)
    order = sorted(range(len(names)), key=lambda i: (-scores[i], i))
    return exact + [n for n in order_names(names, order, scores, k, threshold) if n not in exact]


def order_names(
    names: Sequence[str], order: Sequence[int], scores: np.ndarray, k: int, threshold: float
) -> list[str]:
    """The first `k` of `names` in `order` scoring at least `threshold`."""
    return [names[i] for i in order[:k] if scores[i] >= threshold]


def search_payload(query: str, loaded: Sequence[str]) -> str:
    """The text of a search result (and of the pair a gate adds at a new turn)."""
    payload: dict[str, object] = {"status": "ok", "query": query, "loaded": list(loaded)}
    if loaded:
        payload["next_step"] = "Call the loaded tools directly now."
    else:
        payload["message"] = "No tool matches; describe the capability differently."
    return render_payload(payload)
