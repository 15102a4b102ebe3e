"""Ranking for `search_tool_catalog`: the `Ranker` type and the lexical fallback.

Pure: the default ranking is the gate's hybrid ranker (`attention_scoping.gating`, chosen by
`gateway.tools.resolve_ranker`); the small IDF-weighted word overlap here is only the fallback.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from attention_scoping.common.text import lexical_tokens, split_identifier
from attention_scoping.common.tool import RankTools, ToolSpec

__all__ = ["RankTools", "Ranker", "lexical_ranker"]

Ranker = RankTools
"""Kept for old imports: the same type as `common.tool.RankTools`, `(query, tools) ->
[(tool name, score)]`, best first; scores > 0 count as matches."""


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
