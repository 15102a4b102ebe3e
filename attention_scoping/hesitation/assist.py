"""Assist only when it helps: whether a user's message needs a tool at all, from evidence.

The hint and the ungrounded nudge push the model toward a call. On a message that needs no
tool ("Thanks, have a nice evening!") that push produced a call nobody asked for and then an
empty reply. Two pieces of evidence say a message asks for something a tool does:

- a content word of the message (stop words and numbers dropped, stemmed) occurs in a tool's
  name, description or parameter names, or
- the ranker's best score for the message (pre-selection's record) reaches `ASSIST_MIN_SCORE`.

With neither, the message needs no tool: no hint, no ungrounded nudge. The threshold was chosen
on one half of `benchmarks/data/assist_messages.jsonl` and measured on the other
(`python benchmarks/assist_threshold.py`; docs/runtime.md has the figures). Framework-free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from attention_scoping.core.text import lexical_tokens

__all__ = [
    "ASSIST_MIN_SCORE",
    "best_score",
    "matching_words",
    "needs_tool",
    "tool_words",
]

ASSIST_MIN_SCORE = 0.25
"""Lowest best score (pre-selection's ranker, cosine scale of the default MiniLM ranker) at which
a message with no content word in common with a tool still counts as needing one. Chosen on the
calibration half of `benchmarks/data/assist_messages.jsonl`; see the module docstring."""


def tool_words(name: str, description: str = "", parameters: Iterable[str] = ()) -> set[str]:
    """The content words of a tool: its name's words, its description, its parameter names."""
    return set(lexical_tokens(" ".join([name, description, *parameters])))


def matching_words(request: str, tools: Iterable[set[str]]) -> list[str]:
    """The content words of `request` that occur in any of `tools` (their `tool_words`), in
    the order of the message."""
    vocabulary: set[str] = set().union(*tools)
    return [w for w in dict.fromkeys(lexical_tokens(request)) if w in vocabulary]


def best_score(record: Mapping[str, Any] | None) -> float | None:
    """The best scope score of a pre-selection record (`scope_selection`), or None."""
    scores = record.get("scores") if isinstance(record, Mapping) else None
    if not isinstance(scores, Mapping):
        return None
    values = [float(v) for v in scores.values() if isinstance(v, int | float)]
    return max(values) if values else None


def needs_tool(
    request: str,
    tools: Iterable[set[str]],
    score: float | None,
    *,
    min_score: float = ASSIST_MIN_SCORE,
) -> bool:
    """Whether `request` asks for something one of `tools` (their `tool_words`) does: a content
    word in common, or the ranker's best `score` at least `min_score` (None: no score known)."""
    if score is not None and score >= min_score:
        return True
    return bool(matching_words(request, tools))
