"""Intent pre-selection of the scope: pick the scope a user's message is about before the model
is called, so a model that never navigates still sees the right tools on its first call.

Framework-free. Each scope is represented by its description and its tools' texts; a ranker
scores those documents against the message, a scope takes the best score of its documents, and
the best scope is chosen only when it is clearly ahead of the next one (a relative margin) and
scores high enough in absolute terms (so "hello" activates nothing). Otherwise the choice is
not confident and the caller falls back to its start mode (every tool, the top tools, or
`load_context` only). Scores must therefore be absolute (a cosine similarity, a share of query
words), not normalised per query.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from attention_scoping.core.messages import MessageLike, current_turn
from attention_scoping.core.tool import RankTools, ToolSpec
from attention_scoping.scoping.catalog import ScopeCatalog

SCOPE_DOC_PREFIX = "scope::"
"""Name prefix of the document that stands for a scope's own description."""

Rank = RankTools
"""`(query, documents) -> [(name, score)]`, best first, with absolute scores."""

SELECTION_KEY = "scope_selection"
"""State key of the last pre-selection record (`ScopeChoice.as_record()` plus its `turn`)."""

Reason = Literal["confident", "close_call", "no_match", "no_intent"]
MATCHED = frozenset({"confident", "close_call"})
"""Reasons whose record names tools that match the message."""


@dataclass(frozen=True)
class ScopeChoice:
    """The outcome of one pre-selection, kept in state and sent in the `scope` stream event."""

    scope: str | None
    """The chosen scope, or None when the choice is not confident."""
    reason: Reason
    scores: dict[str, float] = field(default_factory=dict)
    """Best document score per scope, best first."""
    margin: float = 0.0
    """Lead of the best scope's score over the next one's."""
    tools: tuple[str, ...] = ()
    """The tools that matched the message, best first: the chosen scope's, or on a close call
    those of any scope scoring at least the minimum (empty otherwise). A model that answers
    without calling one of them is nudged toward them (`preselected_tools`)."""

    def as_record(self) -> dict[str, Any]:
        """A JSON-able record for state and events."""
        return {
            "scope": self.scope,
            "reason": self.reason,
            "margin": round(self.margin, 4),
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "tools": list(self.tools),
        }

    def explain(self) -> str:
        """One sentence a developer can read."""
        ranked = ", ".join(f"{k} {v:.3f}" for k, v in list(self.scores.items())[:3])
        text = {
            "confident": f"chose {self.scope!r}: ahead by {self.margin:.3f} ({ranked})",
            "close_call": f"no scope chosen: the best leads by only {self.margin:.3f} ({ranked})",
            "no_match": f"no scope chosen: no scope matches the message well enough ({ranked})",
            "no_intent": "no scope chosen: no user message to read",
        }
        return text[self.reason]


def scope_documents(catalog: ScopeCatalog, tools: Iterable[ToolSpec]) -> list[ToolSpec]:
    """The documents a scope is ranked by: one per scope description, plus its tools."""
    docs = [
        ToolSpec(
            f"{SCOPE_DOC_PREFIX}{name}",
            f"{SCOPE_DOC_PREFIX}{name}",
            f"{name}: {catalog.describe(name)}",
            {"type": "object", "properties": {}},
        )
        for name in catalog.names
    ]
    scoped = {t for s in catalog.scopes.values() for t in s.tools}
    docs += [spec for spec in tools if spec.name in scoped]
    return docs


def scope_scores(ranked: Iterable[tuple[str, float]], catalog: ScopeCatalog) -> dict[str, float]:
    """Best document score per scope (a tool in several scopes counts for each), best first."""
    best: dict[str, float] = {}
    for name, score in ranked:
        if name.startswith(SCOPE_DOC_PREFIX):
            owners: Sequence[str] = (name[len(SCOPE_DOC_PREFIX) :],)
        else:
            owners = catalog.scopes_offering(name)
        for scope in owners:
            if scope in catalog.scopes and score > best.get(scope, float("-inf")):
                best[scope] = float(score)
    return dict(sorted(best.items(), key=lambda item: (-item[1], item[0])))


def choose(scores: Mapping[str, float], *, margin: float, min_score: float = 0.0) -> ScopeChoice:
    """The best scope when it scores at least `min_score` and leads the next by `margin`."""
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    if not ordered or ordered[0][1] < min_score or ordered[0][1] <= 0:
        return ScopeChoice(None, "no_match", dict(ordered))
    best = ordered[0][1]
    second = ordered[1][1] if len(ordered) > 1 else 0.0
    lead = best - max(second, 0.0)
    if lead < margin:
        return ScopeChoice(None, "close_call", dict(ordered), lead)
    return ScopeChoice(ordered[0][0], "confident", dict(ordered), lead)


def preselect(
    intent: str,
    catalog: ScopeCatalog,
    documents: Sequence[ToolSpec],
    rank: Rank,
    *,
    margin: float,
    min_score: float = 0.0,
) -> ScopeChoice:
    """Rank `documents` against `intent` and choose a scope (see `choose`)."""
    if not intent.strip():
        return ScopeChoice(None, "no_intent")
    ranked = within_reach(list(rank(intent, documents)), min_score - margin)
    choice = choose(scope_scores(ranked, catalog), margin=margin, min_score=min_score)
    if choice.reason == "confident":
        return replace(choice, tools=matched_tools(ranked, catalog, choice.scope))
    if choice.reason == "close_call":  # no scope wins, but these tools match the message
        return replace(choice, tools=matched_tools(ranked, catalog, None, min_score=min_score))
    return choice


def within_reach(ranked: list[tuple[str, float]], floor: float) -> list[tuple[str, float]]:
    """The head of `ranked` (best first) scoring at least `floor`, when `floor` > 0.

    A document below `min_score - margin` cannot change the choice: it cannot be the chosen
    scope's best, and as the runner-up it trails any choosable best by more than the margin.
    Dropping the tail keeps pre-selection's per-document work to the documents that matter
    (thousands of tools, a few dozen within reach); the record lists only scopes within reach.
    """
    if floor <= 0 or not ranked or ranked[-1][1] >= floor:
        return ranked
    return ranked[: bisect.bisect_right(ranked, -floor, key=lambda pair: -pair[1])]


def matched_tools(
    ranked: Iterable[tuple[str, float]],
    catalog: ScopeCatalog,
    scope: str | None,
    *,
    min_score: float = 0.0,
    allowed: Collection[str] | None = None,
) -> tuple[str, ...]:
    """The scoped tools in `ranked` (best first) scoring above 0 and at least `min_score`:
    those of `scope`, or of every scope when it is None; only names in `allowed` when given."""
    return tuple(
        name
        for name, score in ranked
        if score > 0
        and score >= min_score
        and not name.startswith(SCOPE_DOC_PREFIX)
        and (allowed is None or name in allowed)
        and (owners := catalog.scopes_offering(name))
        and (scope is None or scope in owners)
    )


def readable_choice(choice: ScopeChoice, readable: Collection[str]) -> ScopeChoice:
    """`choice` naming only its matched tools in `readable`: code names only tools that read
    (`core.blast_radius`), so a nudge never points at a write nobody asked for."""
    kept = tuple(t for t in choice.tools if t in readable)
    return choice if kept == choice.tools else replace(choice, tools=kept)


def preselected_tools(state: Mapping[str, Any], messages: Sequence[MessageLike]) -> list[str]:
    """The tools pre-selection matched to the user's current message, best first: the chosen
    scope's, or on a close call the tools of any scope that score at least the minimum. Empty
    when nothing matched (`no_match`, `no_intent`) or the selection was for an earlier turn.

    `AttentionScopingMiddleware` writes the selection (`scope_selection`) with the turn it
    was made for; the hesitation middleware reads it through this function to nudge a model
    that answers such a message without calling any tool (`expect_tool_call=`)."""
    record = state.get(SELECTION_KEY)
    if not isinstance(record, Mapping) or record.get("reason") not in MATCHED:
        return []
    if record.get("turn") != current_turn(messages)[1]:
        return []
    return names_from(record.get("tools"))


def names_from(value: object) -> list[str]:
    """The tool names of a list read back from state (a checkpoint may hold anything)."""
    if not isinstance(value, list | tuple):
        return []
    return [name for name in value if isinstance(name, str)]


def top_tools(
    intent: str,
    catalog: ScopeCatalog,
    documents: Sequence[ToolSpec],
    rank: Rank,
    k: int,
    *,
    min_score: float = 0.0,
    allowed: Collection[str] | None = None,
) -> list[str]:
    """The `k` best tools across every scope for `intent` that score at least `min_score` (and
    above 0), among `allowed` when given: the "top" start mode."""
    if not intent.strip() or k <= 0:
        return []
    ranked = rank(intent, documents)
    return list(matched_tools(ranked, catalog, None, min_score=min_score, allowed=allowed)[:k])
