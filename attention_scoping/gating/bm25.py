"""Okapi BM25 over tool texts: the lexical ranker, and the fallback when no encoder is installed."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from attention_scoping.common.text import lexical_tokens


class BM25Index:
    """A BM25 index over documents; `scores(query)` returns one score per document.

    Example:
        ```python
        index = BM25Index(["get weather forecast", "send slack message"])
        index.scores("what's the forecast?")  # array([0.98, 0.0])
        ```
    """

    def __init__(self, documents: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        """Tokenize and index `documents` (k1, b: the usual BM25 saturation and length norms)."""
        tokens = [lexical_tokens(d) for d in documents]
        self.size = len(documents)
        lengths = np.array([len(t) for t in tokens], dtype=np.float32)
        average = float(lengths.mean()) if self.size else 0.0
        frequency: Counter[str] = Counter()
        for doc in tokens:
            frequency.update(set(doc))
        self.idf = {
            w: math.log(1.0 + (self.size - n + 0.5) / (n + 0.5)) for w, n in frequency.items()
        }
        norm = k1 * (1.0 - b + b * lengths / max(average, 1e-9))
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for i, doc in enumerate(tokens):
            for word, tf in Counter(doc).items():
                ids, weights = postings.setdefault(word, ([], []))
                ids.append(i)
                weights.append(tf * (k1 + 1.0) / (tf + norm[i]))
        self._doc_words = [frozenset(doc) for doc in tokens]
        self._postings = {
            w: (np.asarray(ids, dtype=np.int32), np.asarray(ws, dtype=np.float32))
            for w, (ids, ws) in postings.items()
        }

    def coverage(self, query: str, scores: np.ndarray | None = None) -> float:
        """How much of the query the best-matching document explains: the share of the idf
        mass of the query's indexed words that this document contains (0 when none is indexed).

        A request whose words the catalog barely knows (short conversational text over terse
        descriptions) gets a low coverage, so fusion leans on the dense score there.
        """
        words = {w for w in lexical_tokens(query) if w in self.idf}
        if not words or not self.size:
            return 0.0
        values = self.scores(query) if scores is None else scores
        best = self._doc_words[int(np.argmax(values))]
        total = sum(self.idf[w] for w in words)
        return sum(self.idf[w] for w in words if w in best) / total if total > 0 else 0.0

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for `query` (zeros where no word matches)."""
        out = np.zeros(self.size, dtype=np.float32)
        for word in set(lexical_tokens(query)):
            posting = self._postings.get(word)
            if posting is not None:
                out[posting[0]] += self.idf[word] * posting[1]
        return out
