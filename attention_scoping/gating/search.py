"""The client-side search tool of the native disclosure modes: our ranker behind the
provider's deferral. What it finds is disclosed in its result (`tool_reference` blocks for
Anthropic), so it becomes callable without the tools array changing.

Blast radius (`core.blast_radius`): the search is the model asking, but the ranking is code; a
tool that writes is loaded only when the query names it exactly (the model asked for that tool),
and listed otherwise, so the model can ask for it by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attention_scoping.common.errors import render_payload
from attention_scoping.disclosure.base import SEARCH_TOOL
from attention_scoping.gating.exact import ExactNames
from attention_scoping.gating.index import ToolIndex

WRITES_STEP = (
    f"Tools that change something load only by name: call {SEARCH_TOOL} with the exact tool name "
    "if the request needs one of them."
)


def search_tools(
    index: ToolIndex,
    query: str,
    names: Sequence[str],
    *,
    k: int,
    threshold: float,
    writes: frozenset[str] = frozenset(),
) -> tuple[list[str], list[str]]:
    """(tools to load, tools that write held back) for `query` over indexed `names`: those the
    query names exactly first, then the `k` best ranked above `threshold`."""
    if not names or not query.strip():
        return [], []
    exact = [names[i] for i in ExactNames(names).rows(query)]
    scores = np.asarray(index.scores(query, list(names)), dtype=np.float64)
    order = sorted(range(len(names)), key=lambda i: (-scores[i], i))
    ranked = [names[i] for i in order[:k] if scores[i] >= threshold and names[i] not in exact]
    found = exact + [n for n in ranked if n not in writes]
    return found, [n for n in ranked if n in writes]


def search_payload(query: str, loaded: Sequence[str], held_back: Sequence[str]) -> str:
    """The text of a search result (and of the pair a gate adds at a new turn)."""
    payload: dict[str, object] = {"status": "ok", "query": query, "loaded": list(loaded)}
    if loaded:
        payload["next_step"] = "Call the loaded tools directly now."
    else:
        payload["message"] = "No tool matches; describe the capability differently."
    if held_back:
        payload["writes_not_loaded"] = list(held_back)
        payload["writes_step"] = WRITES_STEP
    return render_payload(payload)
