"""Numbers in text, compared as numbers: how the eval checks a tool result or an answer.

A substring check passes "10368" for 1,036,800 and "3600" for 36; here both sides are parsed
(thousands separators, decimals, percents, signs, scientific notation, "1.2 million") and
compared with a tolerance set by the precision each side was written with: "37.78" matches
37.7777… (it rounds to it), "about 38 °C" matches 37.78, "3,901" matches 3901, "3900" does not.

`snippet_in(snippet, text)` is the check: a snippet with numbers ("mean: 7", "36 %", "3901")
matches where its words appear with equal numbers around them; a snippet whose digits do not
read as plain numbers ("1.234.567,89", a locale's format) is matched as a substring (no-break
and thin spaces read as plain ones).

Framework-free.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Number", "numbers_in", "same_number", "snippet_in", "written_numbers"]

MAX_RELATIVE_ERROR = 0.01
"""A rounded number must also be within 1 % of the other ("1 million" is not 1,036,800)."""

_ODD_SPACES = dict.fromkeys(map(ord, "\u00a0\u202f\u2009\u2007"), " ")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}

_BODY = (
    r"[-−+]?"  # sign
    r"(?:\d{1,3}(?:{sep}\d{3})+|\d+)"  # integer part, maybe grouped
    r"(?:\.\d+)?"  # fraction
    r"(?:\s*[eE][-+−]?\d+|\s*[x×*]\s*10\s*(?:\^|\*\*)\s*[-+−]?\d+)?"  # exponent
    r"(?:\s*(?:%|percent\b|per\s+cent\b)|\s+(?:thousand|million|billion|trillion)\b)?"
)
_BEFORE = r"(?<![\w.,])"  # not inside a word or another number
_AFTER = r"(?!\d|[.,]\d)"  # not cut out of a longer number
_GROUPED = _BODY.replace("{sep}", r"(?:,|[\u00a0\u202f\u2009 ])")
_UNGROUPED = _BODY.replace("{sep}", r"(?:,|[\u00a0\u202f\u2009])")
NUMBER = re.compile(_BEFORE + f"(?:{_GROUPED})" + _AFTER, re.IGNORECASE)
"""A number as people write it (plain spaces may group thousands: "1 036 800")."""
_NUMBER_TIGHT = re.compile(_BEFORE + f"(?:{_UNGROUPED})" + _AFTER, re.IGNORECASE)
"""The same without plain-space grouping ("12 345" read as two numbers)."""
_PARTS = re.compile(
    r"(?P<sign>[-−+])?(?P<int>[\d,\u00a0\u202f\u2009 ]+)(?:\.(?P<frac>\d+))?"
    r"(?:\s*[eE](?P<exp>[-+−]?\d+)|\s*[x×*]\s*10\s*(?:\^|\*\*)\s*(?P<exp2>[-+−]?\d+))?"
    r"\s*(?P<pct>%|percent|per\s+cent)?\s*(?P<scale>thousand|million|billion|trillion)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Number:
    """A number as written: its value, its decimals (negative for "1.2 million": precise to
    the hundred thousand) and whether it was a percentage."""

    value: float
    decimals: int
    percent: bool = False

    def readings(self) -> Iterator[tuple[float, int]]:
        """(value, decimals) it may stand for: a percentage is also its fraction (25 % = 0.25)."""
        yield self.value, self.decimals
        if self.percent:
            yield self.value / 100, self.decimals + 2


def _normalise(text: str) -> str:
    """Superscript exponents ("10⁶") as `10^6`."""
    return re.sub(
        r"10([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "10^" + m.group(1).translate(_SUPERSCRIPTS), text
    )


def parse_number(written: str) -> Number | None:
    """The `Number` of one written number (a `NUMBER` match), or None."""
    parts = _PARTS.fullmatch(written.strip())
    if parts is None:
        return None
    digits = re.sub(r"\D", "", parts["int"])
    if not digits:
        return None
    frac = parts["frac"] or ""
    exponent = int((parts["exp"] or parts["exp2"] or "0").replace("−", "-"))
    scale = _SCALES.get((parts["scale"] or "").casefold(), 0)
    try:
        value = float(f"{digits}.{frac or '0'}e{exponent + scale}")
    except OverflowError:
        return None
    if not math.isfinite(value):
        return None
    if parts["sign"] in ("-", "−"):
        value = -value
    return Number(value, len(frac) - exponent - scale, bool(parts["pct"]))


def numbers_in(text: str) -> list[Number]:
    """Every number in `text`, under both readings of space-grouped digits ("12 345" is 12345,
    and 12 and 345)."""
    text = _normalise(text)
    found: list[Number] = []
    for pattern in (NUMBER, _NUMBER_TIGHT):
        for match in pattern.finditer(text):
            number = parse_number(match.group())
            if number is not None and number not in found:
                found.append(number)
    return found


def written_numbers(text: str) -> list[tuple[str, Number]]:
    """Every number in `text` as written (the widest reading: "1 036 800" is one number) with
    its value; `numbers_in` of the written text gives its other readings."""
    found = []
    for match in NUMBER.finditer(_normalise(text)):
        number = parse_number(match.group())
        if number is not None:
            found.append((match.group().strip(), number))
    return found


def same_number(expected: Number, found: Number) -> bool:
    """Whether two written numbers agree at the precision of the less precise one (and within
    `MAX_RELATIVE_ERROR`): 37.7777… and "37.78", 36 and "36.0", not 36 and "3600"."""
    for want, want_places in expected.readings():
        for got, got_places in found.readings():
            places = min(want_places, got_places)
            tolerance = 0.5 * 10.0 ** (-places) * (1 + 1e-9) + 1e-12
            diff = abs(want - got)
            if diff <= tolerance and diff <= MAX_RELATIVE_ERROR * abs(want) + 1e-12:
                return True
    return False


def _words(piece: str) -> str:
    """A regex for a snippet's text between numbers: case and spacing free."""
    return r"\s*".join(re.escape(word) for word in piece.split()) if piece.strip() else r"\s*"


def _snippet_pattern(snippet: str) -> tuple[re.Pattern[str], list[Number]] | None:
    """A pattern finding the snippet's words with any numbers in its number slots, and the
    snippet's numbers; None when the snippet has no clean numbers (match it as a substring)."""
    snippet = _normalise(snippet)
    matches = list(_NUMBER_TIGHT.finditer(snippet))
    if not matches:
        return None
    numbers = [parse_number(m.group()) for m in matches]
    rest = "".join(_NUMBER_TIGHT.split(snippet))
    if any(n is None for n in numbers) or any(ch.isdigit() for ch in rest):
        return None
    slot = f"({_BEFORE}(?:{_GROUPED}){_AFTER})"
    pieces, start = [], 0
    for match in matches:
        pieces += [_words(snippet[start : match.start()]), r"\s*", slot, r"\s*"]
        start = match.end()
    pieces.append(_words(snippet[start:]))
    return re.compile("".join(pieces), re.IGNORECASE), [n for n in numbers if n is not None]


def _spaced(text: str) -> str:
    """No-break and thin spaces as plain ones: "1 250 000,75" is written both ways."""
    return text.translate(_ODD_SPACES)


def snippet_in(snippet: str, text: str) -> bool:
    """Whether `snippet` appears in `text`, numbers compared as numbers (see the module)."""
    compiled = _snippet_pattern(snippet)
    if compiled is None:
        return _spaced(snippet).casefold() in _spaced(text).casefold()
    pattern, wanted = compiled
    for match in pattern.finditer(_normalise(text)):
        found = [parse_number(group) for group in match.groups()]
        if all(f is not None and same_number(w, f) for w, f in zip(wanted, found, strict=True)):
            return True
    return False
