"""`EncoderSelector`: the core's scope selector on the gate's sentence encoder.

The core's `LexicalSelector` counts shared words; this one adds meaning: each scope is ranked by
the best of its documents (its description, each of its tools' texts), scored by the cosine
similarity of MiniLM embeddings (the `gate` extra's ONNX encoder, loaded as the gate loads it)
plus 0.3 x the share of the message's words found in the document. The scores are absolute, so
"Thanks!" scores low everywhere and selects nothing. It is one keyword away:

```python
AttentionScopingMiddleware(scopes, selector=EncoderSelector())
```

What it reports follows the core's rule: the scope it chooses is opened by code (declared reads
only), and the reads it names are declared reads (`ScopeCatalog.is_read`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attention_scoping.common.text import lexical_tokens
from attention_scoping.gating.errors import GateConfigError, check_finite
from attention_scoping.scopes import ScopeCatalog
from attention_scoping.select import Selection, check_calibration, choose

if TYPE_CHECKING:
    from attention_scoping.gating.cache import VectorCache
    from attention_scoping.gating.catalog_ranker import CatalogRanker
    from attention_scoping.gating.encoders import Encoder

MIN_SCORE = 0.2
"""Lowest fused score the best scope (or a reported read) may have."""
MARGIN = 0.03
"""How far the best scope's fused score must lead the next one's."""
LEXICAL_WEIGHT = 0.3
"""Weight of the lexical share added to the cosine similarity."""
CALIBRATION_NOTE = (
    "min_score 0.2 and margin 0.03 were chosen for the fused ranking on the example agent's "
    "labelled questions and checked on a hold-out set (python benchmarks/scope_preselection.py "
    "--grid; docs/scoping.md)"
)

SCOPE_PREFIX = "scope::"
"""Name prefix of the document standing for a scope's own description."""


@dataclass(frozen=True)
class _Document:
    """One ranking document: what `CatalogRanker` reads, and the scope and tool it stands for."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    scope: str
    tool: str | None


def _parameters(tool: object) -> dict[str, Any]:
    schema = getattr(tool, "args", None)
    return {"type": "object", "properties": dict(schema)} if isinstance(schema, Mapping) else {}


def documents(catalog: ScopeCatalog) -> tuple[_Document, ...]:
    """One document per scope (its name and description) and one per (scope, tool)."""
    docs: list[_Document] = []
    for scope in catalog.scopes.values():
        docs.append(
            _Document(
                f"{SCOPE_PREFIX}{scope.name}",
                f"{scope.name}: {catalog.describe(scope.name)}",
                {},
                scope.name,
                None,
            )
        )
        for name in scope.tools:
            tool = catalog.tool_objects.get(name)
            description = getattr(tool, "description", "") or ""
            docs.append(
                _Document(
                    f"{scope.name}/{name}" if len(catalog.scopes_offering(name)) > 1 else name,
                    description if isinstance(description, str) else "",
                    _parameters(tool),
                    scope.name,
                    name,
                )
            )
    return tuple(docs)


def _words(doc: _Document) -> frozenset[str]:
    tool = doc.tool or ""
    params = " ".join(doc.parameters.get("properties") or {})
    return frozenset(lexical_tokens(f"{tool} {doc.description} {params}"))


class EncoderSelector:
    """Chooses a scope by meaning: MiniLM cosine similarity fused with the lexical share.

    Defaults: `min_score=0.2`, `margin=0.03` (calibrated for this fused score; the lexical
    selector's 0.25 / 0.1 do not fit its scale), `weight=0.3`, and the `gate` extra's MiniLM
    ONNX encoder, loaded at the first selection (`encoder=` for another). Without the extra the
    first selection raises `EncoderUnavailableError` naming the install command; `warm_up`
    loads the encoder now. Safe to share across threads and agents: documents and the fitted
    ranker are kept per catalog behind a lock.

    Example:
        ```python
        from attention_scoping.middleware import AttentionScopingMiddleware
        from attention_scoping.gating.selectors import EncoderSelector

        scoping = AttentionScopingMiddleware(scopes, selector=EncoderSelector())
        ```
    """

    def __init__(
        self,
        *,
        min_score: float = MIN_SCORE,
        margin: float = MARGIN,
        weight: float = LEXICAL_WEIGHT,
        encoder: Encoder | None = None,
        cache: VectorCache | None = None,
    ) -> None:
        """Set the calibration; nothing is loaded yet (`cache`: where document vectors are
        kept, default `~/.cache/attention-scoping`).

        Raises:
            ScopeConfigError: `min_score` or `margin` outside [0, 1] (NaN included).
            GateConfigError: `weight` outside [0, 1], or an `encoder` without `encode`.
        """
        check_calibration(min_score, margin)
        check_finite("weight", weight, 0.0, 1.0)
        if encoder is not None and not callable(getattr(encoder, "encode", None)):
            msg = f"encoder must have an encode(texts) method, not {encoder!r}"
            raise GateConfigError(msg)
        self.min_score = min_score
        self.margin = margin
        self.weight = weight
        self._encoder = encoder
        self._cache = cache
        self._ranker: CatalogRanker | None = None
        self._docs: dict[int, tuple[ScopeCatalog, tuple[_Document, ...], list[frozenset[str]]]] = {}
        self._lock = threading.Lock()

    def ranker(self) -> CatalogRanker:
        """The dense ranker (built, and the encoder loaded, on first use).

        Raises:
            EncoderUnavailableError: the `gate` extra (or the encoder's files) is missing.
        """
        with self._lock:
            if self._ranker is None:
                from attention_scoping.gating.catalog_ranker import CatalogRanker

                self._ranker = CatalogRanker("dense", cache=self._cache, encoder=self._encoder)
            return self._ranker

    def warm_up(self, catalog: ScopeCatalog | None = None) -> None:
        """Load the encoder now (and embed `catalog`'s documents), not at the first message."""
        ranker = self.ranker()
        if catalog is not None:
            ranker("warm up", self._documents(catalog)[0])

    def _documents(
        self, catalog: ScopeCatalog
    ) -> tuple[tuple[_Document, ...], list[frozenset[str]]]:
        with self._lock:
            known = self._docs.get(id(catalog))
            if known is not None and known[0] is catalog:
                return known[1], known[2]
        docs = documents(catalog)
        words = [_words(d) for d in docs]
        with self._lock:
            self._docs[id(catalog)] = (catalog, docs, words)
        return docs, words

    def scores(self, text: str, catalog: ScopeCatalog) -> list[tuple[_Document, float]]:
        """(document, fused score) for every document of `catalog`."""
        docs, words = self._documents(catalog)
        dense = dict(self.ranker()(text, docs))
        asked = set(lexical_tokens(text))
        out = []
        for doc, doc_words in zip(docs, words, strict=True):
            share = len(asked & doc_words) / len(asked) if asked else 0.0
            out.append((doc, float(dense.get(doc.name, 0.0)) + self.weight * share))
        return out

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        """The scope `text` is clearly about (see `attention_scoping.select.choose`), and the
        declared reads scoring at least `min_score`."""
        if not text.strip() or not lexical_tokens(text):
            return Selection(None, "no_intent")
        scopes: dict[str, float] = {}
        reads: dict[str, float] = {}
        for doc, score in self.scores(text, catalog):
            scopes[doc.scope] = max(scopes.get(doc.scope, float("-inf")), score)
            if doc.tool is not None and catalog.is_read(doc.tool):
                reads[doc.tool] = max(reads.get(doc.tool, float("-inf")), score)
        return choose(scopes, reads, min_score=self.min_score, margin=self.margin)
