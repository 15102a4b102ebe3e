"""Selection: which scope a user's message is about, chosen by code before the model is called.

A selector reads the message at the first model call of a turn and names a scope only when it
is clearly ahead (an absolute `min_score` and a `margin` over the next scope), so "Thanks!"
selects nothing. What it selects is opened by code: only the scope's declared reads come into
view, and the model loads the scope itself (`load_context`) for the rest. `LexicalSelector` is
the dependency-free default; an add-on's selector (say a sentence encoder's) is one keyword
away: anything with this module's `select(text, catalog)` method.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from attention_scoping.errors import ScopeConfigError
from attention_scoping.scopes import ScopeCatalog

SELECTION_KEY = "scope_selection"
"""State key of the last selection's record (`Selection.as_record()` plus its `turn`)."""

Reason = Literal["confident", "close_call", "no_match", "no_intent"]


@dataclass(frozen=True)
class Selection:
    """What a selector made of one message: the scope it chose (None unless confident), why,
    the best score per scope, and the declared reads that matched the message, best first (of
    the chosen scope; of any scope on a close call, where they are what an unscoped call shows)."""

    scope: str | None
    reason: Reason
    scores: Mapping[str, float] = field(default_factory=dict)
    reads: tuple[str, ...] = ()

    def as_record(self) -> dict[str, Any]:
        """A JSON-able record for state and stream events."""
        return {
            "scope": self.scope,
            "reason": self.reason,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "reads": list(self.reads),
        }


@runtime_checkable
class Selector(Protocol):
    """Chooses a scope for a message. Implementations must be safe to share across threads."""

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        """The selection for the user's `text` among `catalog`'s scopes."""
        ...


def choose(
    scores: Mapping[str, float], reads: Mapping[str, float], *, min_score: float, margin: float
) -> Selection:
    """The selection from per-scope and per-read scores: the best scope when it reaches
    `min_score` and leads the next by `margin`; the reads reaching `min_score` in any case."""
    ranked = dict(sorted(scores.items(), key=lambda item: (-item[1], item[0])))
    matched = tuple(
        n for n, s in sorted(reads.items(), key=lambda i: (-i[1], i[0])) if s >= min_score
    )
    values = list(ranked.values())
    if not values or values[0] < min_score:
        return Selection(None, "no_match", ranked, ())
    lead = values[0] - (values[1] if len(values) > 1 else 0.0)
    if lead < margin:
        return Selection(None, "close_call", ranked, matched)
    best = next(iter(ranked))
    return Selection(best, "confident", ranked, matched)


def check_calibration(min_score: float, margin: float) -> None:
    """Refuse a calibration outside [0, 1] (NaN included), naming the bad value."""
    for option, value in (("min_score", min_score), ("margin", margin)):
        if not isinstance(value, int | float) or math.isnan(value) or not 0.0 <= value <= 1.0:
            msg = f"{option} must be a number in [0, 1], not {value!r}"
            raise ScopeConfigError(msg)


_CAMEL = re.compile(r"([a-z0-9])([A-Z])|([A-Z]+)([A-Z][a-z])")
_WORD = re.compile(r"[^\W\d_][^\W_]*", re.UNICODE)
STOP_WORDS = frozenset(
    """a an and are as at be but by can could do does for from had has have how i if in into is
    it its me my of on or our please should so than that the their them then there these they
    this to us was we were what when where which who whom why will with would you your also
    just some any get set make use tool""".split()
)
"""Generic English words that carry no intent (tool-name verbs like `get` included)."""


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str) -> frozenset[str]:
    """Content words of `text`: identifiers split (`getInvoice` -> get, invoice), lower-cased,
    stop words dropped, light-stemmed ('refunds' -> 'refund')."""
    spaced = _CAMEL.sub(lambda m: f"{m[1] or m[3]} {m[2] or m[4]}", text).replace("_", " ")
    return frozenset(
        _stem(w) for w in (t.lower() for t in _WORD.findall(spaced)) if w not in STOP_WORDS
    )


def parameter_names(tool: object) -> list[str]:
    """A tool's parameter names, read off its `args_schema` as declared (a JSON-schema dict or
    a pydantic model's fields) without generating its JSON schema (`tool.args` does, at about
    0.7 ms a tool)."""
    schema = getattr(tool, "args_schema", None)
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        return [str(k) for k in props] if isinstance(props, Mapping) else []
    fields = getattr(schema, "model_fields", None)
    return [str(k) for k in fields] if isinstance(fields, Mapping) else []


def tool_words(tool: object, name: str) -> frozenset[str]:
    """The words standing for a tool: its name, description and parameter names."""
    description = getattr(tool, "description", "") or ""
    params = " ".join(parameter_names(tool))
    return words(f"{name} {description if isinstance(description, str) else ''} {params}")


CATALOGS_KEPT = 8
"""Catalogs whose words one selector keeps (the default selector is shared by every middleware
built without one; the oldest is dropped first)."""


class LexicalSelector:
    """The default selector: the share of the message's content words found in a scope's
    name and description or in one of its tools' texts (name, description, parameters).

    Defaults `min_score=0.25`, `margin=0.1` were chosen on the example agent's labelled questions
    (`python benchmarks/scope_preselection.py`). Dependency-free; documents are tokenized once
    per catalog.
    """

    def __init__(self, *, min_score: float = 0.25, margin: float = 0.1) -> None:
        """Set the calibration (both in [0, 1]).

        Raises:
            ScopeConfigError: a value outside [0, 1].
        """
        check_calibration(min_score, margin)
        self.min_score = min_score
        self.margin = margin
        self._documents: dict[
            int, tuple[ScopeCatalog, list[tuple[str, str | None, frozenset[str]]]]
        ] = {}
        self._lock = threading.Lock()

    def documents(self, catalog: ScopeCatalog) -> list[tuple[str, str | None, frozenset[str]]]:
        """(scope, tool or None for the scope itself, words) per document of `catalog`."""
        with self._lock:
            known = self._documents.get(id(catalog))
        if known is not None and known[0] is catalog:
            return known[1]
        docs: list[tuple[str, str | None, frozenset[str]]] = []
        for scope in catalog.scopes.values():
            docs.append((scope.name, None, words(f"{scope.name} {scope.description}")))
            for name in scope.tools:
                docs.append((scope.name, name, tool_words(catalog.tool_objects.get(name), name)))
        with self._lock:
            self._documents[id(catalog)] = (catalog, docs)
            while len(self._documents) > CATALOGS_KEPT:  # the default is shared: stay bounded
                del self._documents[next(iter(self._documents))]
        return docs

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        """Score every document against `text`; see `choose`."""
        asked = words(text)
        if not asked:
            return Selection(None, "no_intent")
        scopes: dict[str, float] = {}
        reads: dict[str, float] = {}
        for scope, tool, doc in self.documents(catalog):
            share = len(asked & doc) / len(asked)
            scopes[scope] = max(scopes.get(scope, 0.0), share)
            if tool is not None and share > 0 and catalog.is_read(tool):
                reads[tool] = max(reads.get(tool, 0.0), share)
        picked = choose(scopes, reads, min_score=self.min_score, margin=self.margin)
        if picked.scope is None:
            return picked
        own = set(catalog.scopes[picked.scope].tools)
        return replace(picked, reads=tuple(n for n in picked.reads if n in own))
