"""Ranking for `search_tool_catalog`: the `Ranker` type, the lexical fallback, and the choice.

Pure: the default ranking comes from `attention_scoping.gating` (the gate's hybrid ranker) when
its extra is installed; the small IDF-weighted word overlap here is only the fallback.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence

from attention_scoping.core.text import lexical_tokens, split_identifier
from attention_scoping.core.tool import ToolSpec

__all__ = ["Ranker", "lexical_ranker", "resolve_ranker"]

logger = logging.getLogger(__name__)

Ranker = Callable[[str, Sequence[ToolSpec]], list[tuple[str, float]]]
"""(query, tools) -> [(tool name, score)], best first; scores > 0 count as matches. Rankers may
rely on `id`, `name`, `summary`, `description` and `parameters` of each tool."""


def lexical_ranker(query: str, entries: Sequence[ToolSpec]) -> list[tuple[str, float]]:
    """Fallback ranking: IDF-weighted overlap of query words with each tool's name words
    (counted twice) and description. Small on purpose; the gating package's ranker replaces it."""
    docs = {
        e.name: Counter(
            lexical_tokens(split_identifier(e.name)) * 2 + lexical_tokens(e.description)
        )
        for e in entries
    }
    df: Counter[str] = Counter()
    for counts in docs.values():
        df.update(set(counts))
    n = max(len(docs), 1)
    query_words = set(lexical_tokens(query))
    scored: list[tuple[str, float]] = []
    for name, counts in docs.items():
        length = math.sqrt(sum(counts.values()) or 1)
        score = sum(
            math.log(1 + n / df[w]) * (1 + math.log(counts[w])) for w in query_words if counts[w]
        )
        if score > 0:
            scored.append((name, round(score / length, 4)))
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def resolve_ranker(ranker: Ranker | None) -> tuple[Ranker, str]:
    """The ranker to use and its label: `ranker`, else the gating package's default, else
    the lexical fallback."""
    if ranker is not None:
        return ranker, getattr(ranker, "__name__", type(ranker).__name__)
    try:
        from attention_scoping.gating.catalog_ranker import default_ranker
    except ImportError:  # the `gate` extra is not installed
        return lexical_ranker, "lexical (fallback)"
    try:
        return default_ranker(), "gating.default_ranker"
    except Exception as exc:  # an optional encoder missing, say: degrade, loudly
        logger.warning("gating.default_ranker() failed (%s); using the lexical fallback", exc)
        return lexical_ranker, "lexical (fallback)"
