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
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from attention_scoping.common.messages import MessageLike, current_turn
from attention_scoping.common.tool import RankTools, ToolSpec
from attention_scoping.scoping.catalog import ScopeCatalog

if TYPE_CHECKING:  # numpy comes with the gate extra; only rankers that need it use it
    import numpy as np

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


@runtime_checkable
class ScoresDocuments(Protocol):
    """A `Rank` that also gives its scores as arrays (`gating.CatalogRanker`): pre-selection
    then picks scopes and tools with numpy instead of walking (name, score) pairs."""

    def scored(self, query: str, entries: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(every document's score, rows named exactly raised to lead; the rows named
        exactly): the order `rank` gives is `gating.catalog_ranker.ranked_rows` of these."""
        ...


class DocumentScopes:
    """The ranking documents of a catalog as arrays: the scopes each one stands for (a scope's
    own document, or every scope offering a tool), built once per catalog and document tuple."""

    def __init__(self, catalog: ScopeCatalog, documents: Sequence[ToolSpec]) -> None:
        """Read the owners of every document (the per-document Python, done once)."""
        import numpy as np

        self.names = [d.name for d in documents]
        self.scope_names = sorted(catalog.scopes)
        ids = {name: i for i, name in enumerate(self.scope_names)}
        docs: list[int] = []
        scopes: list[int] = []
        counts: list[bool] = []
        self.scoped = np.zeros(len(self.names), dtype=bool)
        """Tool documents some scope offers (what `matched_tools` may name)."""
        for row, name in enumerate(self.names):
            if name.startswith(SCOPE_DOC_PREFIX):
                owners: Sequence[str] = (name[len(SCOPE_DOC_PREFIX) :],)
            else:
                owners = catalog.scopes_offering(name)
                self.scoped[row] = bool(owners)
            for scope in owners:
                if scope not in ids:
                    ids[scope] = len(self.scope_names)
                    self.scope_names.append(scope)
                docs.append(row)
                scopes.append(ids[scope])
                counts.append(scope in catalog.scopes)
        self.ids = ids
        self.pair_doc = np.asarray(docs, dtype=np.int64)
        self.pair_scope = np.asarray(scopes, dtype=np.int64)
        self.pair_counts = np.asarray(counts, dtype=bool)
        self.name_order = np.argsort(np.asarray(self.scope_names, dtype=object)).argsort()
        self._allowed: tuple[Collection[str], np.ndarray] | None = None

    def allowed(self, names: Collection[str]) -> np.ndarray:
        """A mask of the documents named in `names` (remembered for the last collection)."""
        import numpy as np

        last = self._allowed
        if last is not None and last[0] is names:
            return last[1]
        mask = np.fromiter((n in names for n in self.names), dtype=bool, count=len(self.names))
        if isinstance(names, frozenset):
            self._allowed = (names, mask)
        return mask

    def best(self, scores: np.ndarray, reach: np.ndarray) -> dict[str, float]:
        """`scope_scores` over the documents in `reach`: best score per scope, best first."""
        import numpy as np

        pairs = self.pair_counts & reach[self.pair_doc]
        owners = self.pair_scope[pairs]
        best = np.full(len(self.scope_names), -np.inf)
        np.maximum.at(best, owners, scores[self.pair_doc[pairs]])
        found = np.flatnonzero(best > -np.inf)
        found = found[np.lexsort((self.name_order[found], -best[found]))]
        return {self.scope_names[i]: float(best[i]) for i in found.tolist()}

    def offered_by(self, scope: str) -> np.ndarray:
        """A mask of the tool documents `scope` offers."""
        import numpy as np

        mask = np.zeros(len(self.names), dtype=bool)
        sid = self.ids.get(scope)
        if sid is not None:
            mask[self.pair_doc[self.pair_scope == sid]] = True
        return mask & self.scoped


_DOCUMENT_SCOPES: list[tuple[ScopeCatalog, Sequence[ToolSpec], DocumentScopes]] = []
_DOCUMENT_SCOPES_LOCK = threading.Lock()
DOCUMENT_SCOPES_MEMO = 8
"""Document tuples whose `DocumentScopes` are remembered (one per scoping middleware)."""


def document_scopes(catalog: ScopeCatalog, documents: Sequence[ToolSpec]) -> DocumentScopes:
    """The `DocumentScopes` of `documents`, remembered for the last few tuples of documents (a
    tuple cannot change; a list is read afresh)."""
    with _DOCUMENT_SCOPES_LOCK:
        known = list(_DOCUMENT_SCOPES)
    for owner, docs, made in known:
        if owner is catalog and docs is documents:
            return made
    made = DocumentScopes(catalog, documents)
    if isinstance(documents, tuple):
        with _DOCUMENT_SCOPES_LOCK:
            _DOCUMENT_SCOPES[:] = [(catalog, documents, made), *_DOCUMENT_SCOPES][
                :DOCUMENT_SCOPES_MEMO
            ]
    return made


def _ordered_names(
    arrays: DocumentScopes, rows: np.ndarray, scores: np.ndarray, exact: np.ndarray
) -> tuple[str, ...]:
    """The names of the documents at `rows`, best first as the ranker orders them: by score,
    rows named exactly before others of the same score, ties in row order."""
    import numpy as np

    named = np.zeros(scores.size, dtype=bool)
    named[exact] = True
    order = rows[np.lexsort((rows, ~named[rows], -scores[rows]))]
    names = arrays.names
    return tuple(names[i] for i in order.tolist())


def _preselect_arrays(
    intent: str,
    catalog: ScopeCatalog,
    documents: Sequence[ToolSpec],
    rank: ScoresDocuments,
    *,
    margin: float,
    min_score: float,
) -> ScopeChoice:
    """`preselect` with numpy over the ranker's score array: the same choice, scores and tools
    as walking its (name, score) pairs, without a Python step per document."""
    import numpy as np

    arrays = document_scopes(catalog, documents)
    values, exact = rank.scored(intent, documents)
    scores = np.asarray(values, dtype=np.float64)
    floor = min_score - margin
    reach = scores >= floor if floor > 0 else np.ones(scores.size, dtype=bool)
    choice = choose(arrays.best(scores, reach), margin=margin, min_score=min_score)
    if choice.reason not in MATCHED:
        return choice
    keep = reach & (scores > 0)
    if choice.reason == "confident" and choice.scope is not None:
        keep &= arrays.offered_by(choice.scope)
    else:  # a close call: the tools of every scope scoring at least the minimum
        keep &= arrays.scoped & (scores >= min_score)
    return replace(choice, tools=_ordered_names(arrays, np.flatnonzero(keep), scores, exact))


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
    if isinstance(rank, ScoresDocuments):
        return _preselect_arrays(
            intent, catalog, documents, rank, margin=margin, min_score=min_score
        )
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
    if isinstance(rank, ScoresDocuments):
        import numpy as np

        arrays = document_scopes(catalog, documents)
        values, exact = rank.scored(intent, documents)
        scores = np.asarray(values, dtype=np.float64)
        keep = arrays.scoped & (scores > 0) & (scores >= min_score)
        if allowed is not None:
            keep &= arrays.allowed(allowed)
        return list(_ordered_names(arrays, np.flatnonzero(keep), scores, exact)[:k])
    ranked = rank(intent, documents)
    return list(matched_tools(ranked, catalog, None, min_score=min_score, allowed=allowed)[:k])
