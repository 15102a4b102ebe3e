"""Exact-name matching: which catalog tools a request names outright.

A request that writes a tool's name, as the identifier (`get_current_weather`,
`getCurrentWeather`) or as its words in order ("get current weather"), asks for that tool; no
similarity ranking should be able to push it out. Every ranking the package ships (the gate's
hybrid, the gateway search, scope pre-selection) puts such tools first.

Only names of at least two words count, so a tool called `search` or `weather` is not named by
every message that uses the word. Plain words in order count only for names of three words or
more: "help me", "air quality" or "weather forecast" are ordinary phrases (on BFCL's dev
requests, two-word names matched as plain words were wrong 54 times out of 70), while
`help_me`, `airQuality` or "get current weather" name a tool.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from attention_scoping.common.text import split_identifier

MIN_WORDS = 2
"""Words a name needs (once split) for a mention of it to count as naming the tool."""

PLAIN_MIN_WORDS = 3
"""Words a name needs for its words in order, written as plain words, to count as naming it."""

MAX_TEXT_WORDS = 4096
"""Words of a message searched for names: a pasted document stays a fraction of a millisecond."""

_WORD = re.compile(r"[a-z0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[_.\-][A-Za-z0-9]+)+|[a-z0-9]+(?:[A-Z][a-z0-9]*)+")
"""A token written like an identifier: with `_`, `.` or `-` inside, or camelCase."""


def name_words(text: str) -> tuple[str, ...]:
    """The lower-case words of an identifier or a sentence (`getHTTPResponse` -> get http
    response; "Get the weather!" -> get the weather)."""
    return tuple(_WORD.findall(split_identifier(text)))


class ExactNames:
    """Rows of the tools whose name a text writes out, over a fixed list of names.

    Example:
        ```python
        names = ExactNames(["get_current_weather", "send_email", "search"])
        names.rows("what is the get current weather tool for?")  # array([0])
        names.rows("please search")                                # array([]) (one word)
        ```
    """

    def __init__(self, names: Sequence[str]) -> None:
        """Index `names` (row i is names[i]; equal names share their rows)."""
        self._rows: dict[tuple[str, ...], list[int]] = {}
        for row, name in enumerate(names):
            words = name_words(name)
            if len(words) >= MIN_WORDS:
                self._rows.setdefault(words, []).append(row)
        plain = [words for words in self._rows if len(words) >= PLAIN_MIN_WORDS]
        self._firsts = frozenset(words[0] for words in plain)
        self._lengths = sorted({len(words) for words in plain})
        self._memo: dict[str, np.ndarray] = {}

    def rows(self, text: str) -> np.ndarray:
        """Rows of the names `text` writes out, in row order (empty when none)."""
        found = self._memo.get(text)
        if found is None:
            found = self._find(text)
            if len(self._memo) >= 64:
                self._memo.clear()
            self._memo[text] = found
        return found

    def _find(self, text: str) -> np.ndarray:
        if not self._rows:
            return np.zeros(0, dtype=np.int64)
        hits: set[int] = set()
        for token in _IDENTIFIER.findall(text[: MAX_TEXT_WORDS * 8]):
            hits.update(self._rows.get(name_words(token), ()))
        words = name_words(text)[:MAX_TEXT_WORDS]
        for start, word in enumerate(words):
            if word not in self._firsts:
                continue
            for length in self._lengths:
                rows = self._rows.get(words[start : start + length])
                if rows is not None:
                    hits.update(rows)
        return np.asarray(sorted(hits), dtype=np.int64)


def exact_mask(exact: np.ndarray, rows: np.ndarray | None, size: int) -> np.ndarray:
    """A boolean mask over the scored tools (all `size` of them, or those at `rows`) that is
    true where the tool's row is in `exact`."""
    if rows is None:
        mask = np.zeros(size, dtype=bool)
        mask[exact] = True
        return mask
    return np.isin(rows, exact)
