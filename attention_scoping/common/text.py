"""Text helpers of the package: identifier splitting, stemming, lexical tokens, tool text for
ranking, and bounded "did you mean" hints. Every layer (gate, gateway, scoping, catalogs) uses
these; none keeps its own splitter, stemmer or fuzzy matcher.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal

from attention_scoping.common.tool import ToolSpec

Representation = Literal["name", "summary", "name_description", "full"]
"""How a tool is turned into text for ranking.

- `name`: the name split into words.
- `summary`: split name + first sentence of the description (the one-line summary that the
  summary pool and the gateway's search results show).
- `name_description`: split name + whole description.
- `full` (default): split name + description + each parameter's name, description and enum
  values (at most 10); the parameters say what the tool acts on, which is often what the user's
  request names.
"""

_CAMEL_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_SEPARATORS = re.compile(r"[_.\-/:\s]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*[A-Za-z0-9]")

STOP_WORDS = frozenset(
    """
    a an and are as at be but by can could do does for from had has have how i if in into is
    it its me my of on or our please should so than that the their them then there these
    they this to us was we were what when where which who whom why will with would you your
    also just some any
    """.split()
)
"""A short, generic English stop-word list for lexical matching."""


@lru_cache(maxsize=65536)
def split_identifier(name: str) -> str:
    """`getHTTPResponse` / `snake_case` / `dotted.name` / `kebab-case` -> lower-case words."""
    text = _CAMEL_ACRONYM.sub(r"\1 \2", name)
    text = _CAMEL_LOWER_UPPER.sub(r"\1 \2", text)
    return " ".join(_SEPARATORS.sub(" ", text).lower().split())


def identifier_words(name: str) -> tuple[str, ...]:
    """The lower-case words of an identifier (`scheduleTime` -> ("schedule", "time"))."""
    return tuple(split_identifier(name).split())


def _parameters(spec: ToolSpec) -> list[str]:
    """One phrase per top-level parameter: words of its name, its description, its enum values."""
    props = spec.parameters.get("properties")
    if not isinstance(props, Mapping):
        return []
    out = []
    for key, value in props.items():
        value = value if isinstance(value, Mapping) else {}
        phrase = split_identifier(str(key))
        desc = " ".join(str(value.get("description", "")).split())
        if desc:
            phrase += f": {desc}"
        items = value.get("items")
        enum = value.get("enum") or (items.get("enum") if isinstance(items, Mapping) else None)
        if isinstance(enum, list) and enum:
            phrase += " (" + ", ".join(str(v) for v in enum[:10]) + ")"
        out.append(phrase)
    return out


def tool_text(spec: ToolSpec, representation: Representation = "full") -> str:
    """The text that stands for `spec` when matching a user's intent."""
    name = split_identifier(spec.name)
    description = " ".join(spec.description.split())
    if representation == "name":
        return name
    if representation == "summary":
        return f"{name}: {spec.summary}"
    if representation == "name_description":
        return f"{name}: {description}"
    if representation == "full":
        params = "; ".join(_parameters(spec))
        return f"{name}: {description}" + (f" Parameters: {params}" if params else "")
    msg = f"unknown representation {representation!r}; valid: name, summary, name_description, full"
    raise ValueError(msg)


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    try:
        import snowballstemmer
    except ImportError:  # stemming is a refinement; matching works without it
        return None
    return snowballstemmer.stemmer("english")


_LIGHT_SUFFIXES = ("ing", "ed", "es", "s")


def _light_stem(word: str) -> str:
    """A small suffix stripper, used when `snowballstemmer` (the `gate` extra) is absent."""
    for suffix in _LIGHT_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English stem of a lower-case word ('forecasts' -> 'forecast'): Snowball when
    installed, else a light suffix stripper."""
    stemmer = _stemmer()
    return stemmer.stemWord(word) if stemmer is not None else _light_stem(word)


def lexical_tokens(text: str) -> list[str]:
    """Words for lexical matching: identifiers split, lower-cased, stop words and bare numbers
    dropped, English-stemmed (so 'forecasts' matches 'forecast')."""
    words = " ".join(split_identifier(w) for w in text.split())
    return [
        stem(w)
        for w in (t.lower() for t in _WORD.findall(words))
        if w not in STOP_WORDS and not w.isdigit()
    ]


DID_YOU_MEAN_MAX_CHARS = 200
"""Longer values get no hint: a name that long is not a typo, and fuzzy matching it is costly."""


def identifier_tokens(text: str) -> set[str]:
    """The identifier-like tokens written in `text` (`refund_payment`, `sendMail`,
    `github.create_issue`), lowercased: what tool names are matched against."""
    return {t.lower() for t in _IDENTIFIER.findall(text)}


def names_in_text(text: str, names: Iterable[str]) -> list[str]:
    """The `names` (tool identifiers) that `text` writes out whole, case-insensitively, in the
    order of `names`: `get_forecast` counts in "call `get_forecast`" but not in
    "get_forecasts"."""
    tokens = identifier_tokens(text)
    return [name for name in names if name and name.lower() in tokens]


def did_you_mean(
    value: object,
    candidates: Iterable[str],
    *,
    cutoff: float = 0.6,
    max_chars: int = DID_YOU_MEAN_MAX_CHARS,
) -> str | None:
    """The candidate closest to `value` (difflib ratio >= `cutoff`), or None.

    Bounded: non-strings, empty values and values over `max_chars` get no hint, so a model
    sending a 100 KB "name" costs nothing.
    """
    if not isinstance(value, str) or not value or len(value) > max_chars:
        return None
    pool = [c for c in candidates if isinstance(c, str) and len(c) <= max_chars]
    match = difflib.get_close_matches(value, pool, n=1, cutoff=cutoff)
    return match[0] if match else None


def did_you_mean_hint(value: object, candidates: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`did_you_mean` as message text: ` (did you mean 'x'?)`, or an empty string."""
    match = did_you_mean(value, candidates, cutoff=cutoff)
    return f" (did you mean {match!r}?)" if match else ""


def listing(items: Iterable[str], limit: int) -> str:
    """`a, b, c, … (N more)`: the first `limit` items joined, the rest counted (a list too long
    for a message; items are shown as given, so the caller quotes or sorts them)."""
    seq = list(items)
    shown = ", ".join(seq[:limit])
    return shown + (f", … ({len(seq) - limit} more)" if len(seq) > limit else "")


def string_tuple(value: object) -> tuple[str, ...] | None:
    """A file field that holds one string or a list of them, as a tuple (None and absent: an
    empty tuple); None when it is anything else, so the caller can name the problem."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def printable(text: str) -> str:
    """`text` with control characters (terminal escape sequences among them) written out as
    `\\x1b`-style escapes, so catalog text printed to a terminal cannot drive it."""
    return "".join(
        ch if ch in "\t\n" or unicodedata.category(ch) != "Cc" else _escaped(ch) for ch in text
    )


def _escaped(ch: str) -> str:
    return ch.encode("unicode_escape").decode("ascii")
