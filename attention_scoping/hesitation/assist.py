"""Assist only when it helps: whether a user's message needs a tool at all, from evidence.

The hint and the ungrounded nudge push the model toward a call. On a message that needs no
tool ("Thanks, have a nice evening!") that push produced a call nobody asked for and then an
empty reply. Two pieces of evidence say a message asks for something a tool does:

- a content word of the message (stop words and numbers dropped, stemmed) occurs in a tool's
  name, description or parameter names, or
- the selector's best scope score for the message (its `scope_selection` record) reaches
  `ASSIST_MIN_SCORE`.

With neither, the message needs no tool: no hint, no ungrounded nudge. The threshold was chosen
on one half of `benchmarks/data/assist_messages.jsonl` and measured on the other
(`python benchmarks/assist_threshold.py`; docs/runtime.md has the figures).

A message about the conversation itself ("Which two numbers did I ask you to multiply?") shares
words with a tool but is answered from what was said: it refers back ("did I", "you said",
"again", "remind me") and brings nothing the conversation has not seen (no new number, name or
quoted text). It gets no hint and no ungrounded nudge either (`asks_about_conversation`); the
model may still call a tool. The cues are English. Framework-free.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from attention_scoping.common.text import lexical_tokens

__all__ = [
    "ASSIST_MIN_SCORE",
    "asks_about_conversation",
    "best_score",
    "matching_words",
    "needs_tool",
    "new_values",
    "refers_back",
    "tool_words",
]

ASSIST_MIN_SCORE = 0.25
"""Lowest best score at which a message with no content word in common with a tool still counts
as needing one. Chosen on the calibration half of `benchmarks/data/assist_messages.jsonl` with
the old MiniLM ranker's cosine scale (see the module docstring); the core's `LexicalSelector`
scores shares of the message's words, so there a score this high already means shared words."""


_BACK_REFERENCE = re.compile(
    r"\b(?:(?:did|have|had|was|were)\s+(?:i|you|we)"
    r"|you\s+(?:said|told|gave|mentioned|wrote|answered|found|got|used)"
    r"|i\s+(?:asked|gave|said|told|mentioned|meant)"
    r"|again|remind\s+me|repeat)\b",
    re.IGNORECASE,
)
"""Words by which a message points back at what was said in the conversation (English)."""

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_QUOTED = re.compile(r"(?<!\w)['\"\u2018\u201c]([^'\"\u2019\u201d]{2,})['\"\u2019\u201d](?!\w)")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w-]+")


def refers_back(request: str) -> bool:
    """Whether `request` points back at the conversation ("did you say", "again", ...)."""
    return bool(_BACK_REFERENCE.search(request))


def new_values(request: str, earlier: str) -> list[str]:
    """The values `request` brings that `earlier` (the conversation before it) does not hold:
    numbers, quoted text and capitalized names inside a sentence, compared case-insensitively."""
    seen = earlier.lower()
    known = set(_NUMBER.findall(earlier))
    numbers = [n for n in _NUMBER.findall(request) if n not in known]
    quoted = [q for q in _QUOTED.findall(request) if q.lower() not in seen]
    names = [n for n in _NAME.findall(request) if n != "I" and n.lower() not in seen]
    return list(dict.fromkeys([*numbers, *quoted, *names]))


def asks_about_conversation(request: str, earlier: str) -> bool:
    """Whether `request` asks about what the conversation already holds: it refers back and
    brings no new value. False on a first message (`earlier` empty)."""
    return bool(earlier.strip()) and refers_back(request) and not new_values(request, earlier)


def tool_words(name: str, description: str = "", parameters: Iterable[str] = ()) -> set[str]:
    """The content words of a tool: its name's words, its description, its parameter names."""
    return set(lexical_tokens(" ".join([name, description, *parameters])))


def matching_words(request: str, tools: Iterable[set[str]]) -> list[str]:
    """The content words of `request` that occur in any of `tools` (their `tool_words`), in
    the order of the message."""
    vocabulary: set[str] = set().union(*tools)
    return [w for w in dict.fromkeys(lexical_tokens(request)) if w in vocabulary]


def best_score(record: Mapping[str, Any] | None) -> float | None:
    """The best scope score of a selection record (`scope_selection`), or None."""
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
    earlier: str = "",
) -> bool:
    """Whether `request` asks for something one of `tools` (their `tool_words`) does: a content
    word in common, or the selector's best `score` at least `min_score` (None: no score known);
    never when it asks about the conversation `earlier` holds (`asks_about_conversation`)."""
    if asks_about_conversation(request, earlier):
        return False
    if score is not None and score >= min_score:
        return True
    return bool(matching_words(request, tools))
