"""What a model sees while no scope is active: a pre-selected scope, or a start set of tools.

The LangChain side of `preselect`: it turns the registered tools into ranking documents once,
builds the ranker lazily (the gate's hybrid ranker when the `gate` extra is installed, a
dependency-free lexical ranker otherwise), and answers two questions per model call: which scope
does this message clearly ask for, and, when none, which tools to start with. Both are code
deciding for the model, so both name only tools that read (`core.blast_radius`): every tool
still ranks the scopes, but a start set and a choice's matched tools never hold a writing one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Sequence
from typing import Any, Literal

from attention_scoping.adapters.tools import specs_from_tools
from attention_scoping.common.blast_radius import may_open
from attention_scoping.common.extras import GATE_EXTRA_HINT
from attention_scoping.common.options import check_choice, choices_text
from attention_scoping.common.text import lexical_tokens
from attention_scoping.common.tool import ToolSpec
from attention_scoping.scoping.catalog import ScopeCatalog
from attention_scoping.scoping.preselect import (
    Rank,
    ScopeChoice,
    preselect,
    readable_choice,
    scope_documents,
)
from attention_scoping.scoping.preselect import top_tools as rank_top_tools

logger = logging.getLogger(__name__)

Preselect = Literal["off", "unscoped", "every_turn"]
"""When to pre-select: never; while no scope is active; or also at every new user turn."""

Start = Literal["index", "all", "top"]
"""What an unscoped call shows when pre-selection is off or not confident: `index` (only the
always-on tools and `load_context`), `all` (every scoped tool), `top` (the best tools across
scopes for the message)."""

PRESELECT_MODES: tuple[str, ...] = ("off", "unscoped", "every_turn")
START_MODES: tuple[str, ...] = ("index", "all", "top")


_DOCUMENT_WORDS: list[tuple[Sequence[ToolSpec], list[tuple[str, frozenset[str]]]]] = []
_DOCUMENT_WORDS_LOCK = threading.Lock()
DOCUMENT_WORDS_MEMO = 8
"""Document tuples whose words `lexical_rank` remembers (one per scoping middleware)."""


def document_words(documents: Sequence[ToolSpec]) -> list[tuple[str, frozenset[str]]]:
    """(name, words of name, description and parameter names) per document, tokenized once per
    tuple of documents (a tuple cannot change; a list is tokenized afresh)."""
    with _DOCUMENT_WORDS_LOCK:
        known = list(_DOCUMENT_WORDS)
    for docs, words in known:
        if docs is documents:
            return words
    made = [
        (
            doc.name,
            frozenset(
                lexical_tokens(f"{doc.name} {doc.description} {' '.join(doc.parameter_names())}")
            ),
        )
        for doc in documents
    ]
    if isinstance(documents, tuple):
        with _DOCUMENT_WORDS_LOCK:
            _DOCUMENT_WORDS[:] = [(documents, made), *_DOCUMENT_WORDS][:DOCUMENT_WORDS_MEMO]
    return made


def lexical_rank(query: str, documents: Sequence[ToolSpec]) -> list[tuple[str, float]]:
    """Dependency-free ranking: the share of the query's words found in each document."""
    words = set(lexical_tokens(query))
    if not words:
        return []
    scored = []
    for name, text in document_words(documents):
        hits = len(words & text)
        if hits:
            scored.append((name, hits / len(words)))
    return sorted(scored, key=lambda item: (-item[1], item[0]))


LEXICAL_WEIGHT = 0.3
"""Weight of the lexical share added to the cosine similarity in the default ranking."""

LEXICAL_FALLBACK = "lexical (fallback)"
"""The label of `ranker="auto"` without the gate extra; said once at INFO, not as a warning,
since an install without the extra runs it by design."""

RANKERS = ("auto", "dense", "fused", "lexical")
"""Ranker names pre-selection accepts."""

CALIBRATION: dict[str, tuple[float, float]] = {
    "fused": (0.2, 0.03),
    "dense": (0.2, 0.03),
    "lexical": (0.25, 0.1),
}
"""(min_score, margin) per kind of ranker, chosen on the example agent's labelled questions and
checked on a hold-out set (`python benchmarks/scope_preselection.py --grid`; docs/scoping.md
has the table). Scores differ in scale by ranker, so each kind has its own."""


class FusedRank:
    """Cosine similarity plus `weight` x the lexical share: absolute, so an off-topic message
    scores low everywhere, and a request that names a tool's words is not lost to the encoder."""

    def __init__(self, dense: Rank, weight: float = LEXICAL_WEIGHT) -> None:
        """Fuse `dense` (cosine similarities) with `lexical_rank`."""
        self.dense = dense
        self.weight = weight
        self.__name__ = f"{getattr(dense, '__name__', 'dense')} + {weight:g} x lexical"

    def __call__(self, query: str, documents: Sequence[ToolSpec]) -> list[tuple[str, float]]:
        """(name, score) for every document with any signal, best first."""
        scores = dict(self.dense(query, documents))
        for name, share in lexical_rank(query, documents):
            scores[name] = scores.get(name, 0.0) + self.weight * share
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _check_ranker(ranker: object) -> None:
    """Refuse a ranker that is neither a known name nor a callable."""
    if ranker not in RANKERS:
        msg = f"ranker must be {choices_text(RANKERS)} or a callable, not {ranker!r}"
        raise ValueError(msg)


def resolve_rank(ranker: Any) -> tuple[Rank, str, str]:
    """The ranking function for `ranker`, its label, and its calibration kind.

    `ranker`: `"auto"` (MiniLM cosine similarity with the `gate` extra, else lexical),
    `"dense"`, `"fused"` (cosine plus a share of the lexical score), `"lexical"`, or a callable
    `(query, specs) -> [(name, score)]` with absolute scores (kind `"custom"`: pass
    `preselect_min_score` and `preselect_margin`).
    """
    if callable(ranker) and not isinstance(ranker, str):
        return ranker, getattr(ranker, "__name__", type(ranker).__name__), "custom"
    _check_ranker(ranker)
    if ranker == "lexical":
        return lexical_rank, "lexical", "lexical"
    try:
        from attention_scoping.gating.catalog_ranker import CatalogRanker

        dense = CatalogRanker("dense")
    except Exception as exc:  # the gate extra is missing: degrade, and say so (ScopeStart)
        if ranker != "auto":
            raise
        logger.debug("the MiniLM encoder is unavailable: %s", exc)
        return lexical_rank, LEXICAL_FALLBACK, "lexical"
    if ranker == "fused":
        fused = FusedRank(dense)
        return fused, fused.__name__, "fused"
    return dense, dense.__name__, "dense"


class ScopeStart:
    """Pre-selection and start set of one scoping middleware (ranker built on first use)."""

    def __init__(
        self,
        catalog: ScopeCatalog,
        *,
        preselect: Preselect,
        start: Start,
        margin: float | None,
        min_score: float | None,
        top_k: int,
        ranker: Any,
    ) -> None:
        """Validate the options; nothing is ranked or loaded yet."""
        check_choice("preselect", preselect, PRESELECT_MODES)
        check_choice("start", start, START_MODES)
        if margin is not None and not 0.0 <= margin < 1.0:
            msg = f"preselect_margin must be in [0, 1), not {margin!r}"
            raise ValueError(msg)
        custom = callable(ranker) and not isinstance(ranker, str)
        if custom and (margin is None or min_score is None):
            msg = "a custom ranker needs preselect_margin and preselect_min_score for its scale"
            raise ValueError(msg)
        if not custom:
            _check_ranker(ranker)
        if top_k < 1:
            msg = f"start_top_k must be at least 1, not {top_k!r}"
            raise ValueError(msg)
        self.catalog = catalog
        self.preselect: Preselect = preselect
        self.start: Start = start
        self._margin = margin
        self._min_score = min_score
        self.margin = 0.0
        self.min_score = 0.0
        self.top_k = top_k
        self._ranker_spec = ranker
        self._rank: Rank | None = None
        self.ranker_label = ""
        self._docs: tuple[tuple[str, ...], tuple[ToolSpec, ...], frozenset[str]] | None = None
        self._seen: tuple[tuple[int, ...], tuple[Any, ...]] | None = None
        self._lock = threading.Lock()

    @property
    def needs_ranking(self) -> bool:
        """Whether any call will rank (pre-selection on, or the `top` start)."""
        return self.preselect != "off" or self.start == "top"

    def _ranking(self, tools: Sequence[Any]) -> tuple[Rank, tuple[ToolSpec, ...], frozenset[str]]:
        """The ranker, the ranking documents of `tools`, and the names code may put in view
        (read again only when the tool objects change; a tuple, so rankers and pre-selection
        recognise the same documents by identity)."""
        with self._lock:
            if self._rank is None:
                self._rank, self.ranker_label, kind = resolve_rank(self._ranker_spec)
                hint = (
                    f" (MiniLM needs the gate extra: {GATE_EXTRA_HINT})"
                    if self.ranker_label == LEXICAL_FALLBACK
                    else ""
                )
                logger.info("scope pre-selection ranks with %s%s", self.ranker_label, hint)
                floor, lead = CALIBRATION.get(kind, (0.0, 0.0))
                self.min_score = floor if self._min_score is None else self._min_score
                self.margin = lead if self._margin is None else self._margin
            ids = tuple(map(id, tools))
            if self._seen is not None and self._seen[0] == ids:
                assert self._docs is not None
                return self._rank, self._docs[1], self._docs[2]
            objects = [t for t in tools if not isinstance(t, dict)]
            key = tuple(getattr(t, "name", "") for t in objects)
            if self._docs is None or self._docs[0] != key:
                docs = tuple(scope_documents(self.catalog, specs_from_tools(objects)))
                readable = frozenset(t.name for t in objects if may_open(t, "code"))
                self._docs = (key, docs, readable)
            self._seen = (ids, tuple(tools))  # held, so no id in `ids` is reused meanwhile
            return self._rank, self._docs[1], self._docs[2]

    def choose(self, intent: str, tools: Sequence[Any]) -> ScopeChoice:
        """Pre-select a scope for `intent` over the registered `tools` (every tool ranks the
        scopes; the choice names only the matched tools that read)."""
        rank, docs, readable = self._ranking(tools)
        choice = preselect(
            intent, self.catalog, docs, rank, margin=self.margin, min_score=self.min_score
        )
        return readable_choice(choice, readable)

    def best_tools(
        self, intent: str, tools: Sequence[Any], k: int, allowed: Collection[str]
    ) -> list[str]:
        """The `k` best of `allowed` for `intent`, ranked over the registered `tools` (scored
        above 0 and at least the ranker's minimum): what a native scope discloses."""
        rank, docs, _ = self._ranking(tools)
        return rank_top_tools(
            intent, self.catalog, docs, rank, k, min_score=self.min_score, allowed=allowed
        )

    def offered(self, intent: str, tools: Sequence[Any]) -> list[str]:
        """The start set of tools (beyond always-on ones) for an unscoped call: tools that
        read, among the registered `tools`."""
        if self.start == "index":
            return []
        if self.start == "all":
            readable = frozenset(
                t.name for t in tools if not isinstance(t, dict) and may_open(t, "code")
            )
            return sorted({t for s in self.catalog.scopes.values() for t in s.tools} & readable)
        rank, docs, readable = self._ranking(tools)
        return rank_top_tools(
            intent,
            self.catalog,
            docs,
            rank,
            self.top_k,
            min_score=self.min_score,
            allowed=readable,
        )
