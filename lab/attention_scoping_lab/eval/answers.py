"""What a turn's answer must give and must not say, read against what the tools returned.

**Facts the answer must give.** An expectation names them with `gives` templates over its
call's result: `"temperature: {}"` finds "temperature: 22 °C (feels like 21 °C)" and makes 22 a
fact the answer of that turn must state. The slot takes a number when one stands there (compared
as a number, `numbers.same_number`: "15.55" gives 15.552), else text up to what follows it in the
template (or to the next `,` `;` `(` or line end), matched by normalised containment (case, odd
spaces and dashes do not matter; accents do; it starts at a word, and a fact of up to
`SHORT_FACT` letters is a whole word). `...` skips text within a line. A template that matches
several times (one line per forecast day) is given by any of its values; a list of templates is
one fact given by any of them. Without `gives`, a one-line result gives its value ("3901"; "5 mi
= 8.04672 km" gives 8.04672; "invoice -> French: facture" gives facture), and `"{}"` alone names
that value.

**Numbers nothing said.** An answer contradicts the tools when, in a turn where a tool ran, it
states a number that is neither a tool's result or argument nor in a message of the conversation,
rounded at the precision it is written ("38" for 37.7778, "about 3,900" for 3,942.89, not "71.6"
for 72; whole numbers up to 10 are free, they count things; one arithmetic step from the numbers
of one call's arguments shows the tool's work, "12" for `sqrt(144)`): "47 × 83 = 3,801" after
`calculate` returned 3901, "72 °F" the model converted itself, or a temperature stated after the
weather tool failed.

**A call written as code** (`get_current_weather(city="Paris")`) that makes up the answer is no
answer. Framework-free and deterministic: no model judges.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from attention_scoping_lab.eval.numbers import (
    MAX_RELATIVE_ERROR,
    NUMBER,
    Number,
    numbers_in,
    parse_number,
    same_number,
    written_numbers,
)

SLOT = "{}"
SKIP = "..."
FREE_UP_TO = 10
"""Whole numbers an answer may use without a source ("3 days", "June 2", "step 1")."""
STEP_OPERANDS = 8
"""Numbers of one call's arguments combined in `_steps` (bounds the pairs)."""
MAX_STEP_POWER = 12
ROUNDED_RELATIVE_ERROR = 0.02
"""How far a round number ("about 3,900") may be from the source it rounds (3,942.89)."""
SHORT_FACT = 3
"""Text facts this short ("fr", "mph") must stand as a whole word; longer ones may be followed
by more letters ("comma" in "commas")."""
CODE_LEAD_IN = 40
"""Letters of prose a code-written call may come with and still be the whole answer."""

_ODD_SPACES = dict.fromkeys(map(ord, "\u00a0\u202f\u2009\u2007\u200a"), " ")
_DASHES = dict.fromkeys(map(ord, "-\u2010\u2011\u2012\u2013\u2014\u2212"), " ")
_QUOTES = {ord("\u2019"): "'", ord("\u2018"): "'"}
_EDGE = " .,;:!?'\"`"
_DIGITS = r"[\d\s\u00a0\u202f.,'\u066b\u066c]*"
_VALUE_CHARS = re.compile(rf"[-−+]?{_DIGITS}\d{_DIGITS}")
"""A number written for some locale ("1.234.567,89", "2 500 000,5", "12,34,567")."""
_NOTE = re.compile(r"\s*\[[^\]\n]*\]\s*$")
_CODE_CALL = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\s*\([^()\n]*\)")
_FENCE = re.compile(r"```[\w-]*")


class TemplateError(ValueError):
    """A `gives` template that cannot be read (it needs exactly one `{}`)."""


def normalise(text: str) -> str:
    """Text as compared: NFKC, casefolded, odd spaces and dashes as spaces, one space between
    words (accents kept: "sesion" is not "sesión")."""
    text = unicodedata.normalize("NFKC", text).translate(_ODD_SPACES)
    text = text.translate(_DASHES).translate(_QUOTES).casefold()
    return " ".join(text.split())


@dataclass(frozen=True)
class Fact:
    """One value a tool returned that an answer must state: `number` when it is one."""

    text: str
    number: Number | None = None

    def given_in(self, answer: str) -> bool:
        """Whether `answer` states this fact (numbers as numbers, text by containment)."""
        if self.number is not None:
            return any(same_number(self.number, found) for found in numbers_in(answer))
        wanted = normalise(self.text).strip(_EDGE)
        if not wanted:
            return False
        word = wanted[0].isascii() and wanted[0].isalnum()
        start = r"(?<!\w)" if word else ""
        end = r"(?!\w)" if word and len(wanted) <= SHORT_FACT else ""  # "fr" is not in "from"
        return re.search(start + re.escape(wanted) + end, normalise(answer)) is not None


def fact(value: str) -> Fact:
    """A fact from a value as written: a number when the value is one plain number."""
    value = value.strip().rstrip(".").strip()
    match = NUMBER.fullmatch(value)
    number = parse_number(match.group()) if match else None
    return Fact(value, number)


def _words(piece: str) -> str:
    """A regex for a template's literal text: case and spacing free, `...` skips in a line."""
    parts = []
    for chunk in piece.split(SKIP):
        words = chunk.split()
        body = r"\s+".join(re.escape(w) for w in words)
        lead = r"\s*" if chunk[:1].isspace() else ""
        tail = r"\s*" if chunk[-1:].isspace() else ""
        parts.append(lead + body + tail if words else r"\s*")
    return r"[^\n]*?".join(parts)


@dataclass(frozen=True)
class Template:
    """A compiled `gives` template: a number pattern tried first, then a text pattern."""

    source: str
    numeric: re.Pattern[str]
    textual: re.Pattern[str]

    def values(self, result: str) -> list[Fact]:
        """The facts this template finds in `result` (numbers if any match, else text)."""
        found = [fact(m.group("v")) for m in self.numeric.finditer(result)]
        if not found:
            found = [fact(m.group("v")) for m in self.textual.finditer(result)]
        return [f for f in found if f.text]


def compile_template(template: str) -> Template:
    """Compile one `gives` template.

    Raises:
        TemplateError: the template has no `{}` or more than one.
    """
    if template.count(SLOT) != 1:
        msg = f"a gives template needs exactly one {SLOT}, got {template!r}"
        raise TemplateError(msg)
    before, after = template.split(SLOT)
    prefix, suffix = _words(before) if before else "", _words(after) if after else ""
    number = rf"(?P<v>{NUMBER.pattern})"
    if before:
        text = r"(?P<v>[^\n]+?)" if after else r"(?P<v>[^\n,;()]+)"
        start = prefix + r"[ \t]*"
    else:
        text = r"(?P<v>[^\n,;:()]+?)" if after else r"(?P<v>[^\n,;:()]+)"
        start = r"(?:^|(?<=[,;:(]))[ \t]*"
    flags = re.IGNORECASE | re.MULTILINE
    return Template(
        template,
        re.compile(prefix + r"[ \t]*" + number + suffix, flags),
        re.compile(start + text + suffix, flags),
    )


def result_value(result: str) -> list[Fact]:
    """What a one-line result gives without a template: a number, a number written for a
    locale, the right side of `a = b`, or the term after `->` (none for anything else)."""
    line = result.strip()
    if not line or "\n" in line:
        return []
    line = _NOTE.sub("", line)
    if " = " in line:
        right = line.rsplit(" = ", 1)[1]
        numbers = written_numbers(right)
        return [Fact(numbers[0][0], numbers[0][1])] if numbers else [fact(right)]
    if "->" in line:
        term = line.split("->", 1)[1]
        return [fact(term.split(": ", 1)[1] if ": " in term else term)]
    return [fact(line)] if _VALUE_CHARS.fullmatch(line) else []


@dataclass(frozen=True)
class Required:
    """One fact an answer must give: where it comes from (`label`) and its acceptable values."""

    label: str
    values: tuple[Fact, ...]


def required_facts(gives: Sequence[Sequence[str]] | None, result: str) -> list[Required]:
    """The facts a call's `result` obliges its turn's answer to give, one per `gives` entry
    (each entry: templates, any of them); None: the one-line result's value, if it has one."""
    if gives is None:
        value = result_value(result)
        return [Required("the result", tuple(value))] if value else []
    required = []
    for templates in gives:
        values: list[Fact] = []
        for template in templates:
            found = result_value(result) if template == SLOT else None
            values += compile_template(template).values(result) if found is None else found
        required.append(Required(" or ".join(templates), tuple(values)))
    return required


def _free(number: Number) -> bool:
    value = number.value
    return not number.percent and value.is_integer() and 0 <= value <= FREE_UP_TO


def _readings(stated: Number) -> list[tuple[float, int, float]]:
    """(value, decimal places, largest relative error) `stated` may stand for: as written; a
    percentage as its fraction; a whole number ending in zeros also at the precision its zeros
    suggest ("3,900" for 3,942.89), within `ROUNDED_RELATIVE_ERROR`."""
    out = []
    for value, places in stated.readings():
        out.append((value, places, math.inf if places >= 0 else MAX_RELATIVE_ERROR))
        digits = f"{abs(value):.0f}" if places == 0 and value.is_integer() and value else ""
        zeros = len(digits) - len(digits.rstrip("0"))
        if zeros:
            out.append((value, -zeros, ROUNDED_RELATIVE_ERROR))
    return out


def _rounds_to(source: Number, stated: Number) -> bool:
    """Whether `stated` is `source` as written at `stated`'s own precision ("38" and "37.78"
    for 37.7778; not "71.6" for 72, which says more than the source); a scaled number ("1
    million") must also be near enough (`_readings`). Either sign ("minus 3" is -3)."""
    for want, _ in source.readings():
        for got, places, relative in _readings(stated):
            diff = abs(abs(want) - abs(got))
            if diff > 0.5 * 10.0 ** (-places) * (1 + 1e-9) + 1e-12:
                continue
            if diff <= relative * abs(want) + 1e-12:
                return True
    return False


def _known(number: Number, known: Sequence[Number]) -> bool:
    return any(_rounds_to(source, number) for source in known)


def _steps(arguments: str) -> list[Number]:
    """The numbers one arithmetic step from the numbers of one call's arguments: what a model
    shows of the tool's work ("√144 + 2^10 = 12 + 1024 = 1036" after `sqrt(144) + 2**10`)."""
    values = list(dict.fromkeys(n.value for n in numbers_in(arguments)))[:STEP_OPERANDS]
    found = [math.sqrt(a) for a in values if a >= 0]
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            found += [a + b, a - b, b - a, a * b]
            found += [x / y for x, y in ((a, b), (b, a)) if y]
            found += [x**y for x, y in ((a, b), (b, a)) if abs(y) <= MAX_STEP_POWER and x > 0]
    return [Number(v, 12) for v in found if math.isfinite(v) and abs(v) < 1e15]


def unaccounted_numbers(
    answer: str, sources: Iterable[str], arguments: Iterable[str] = ()
) -> list[str]:
    """The numbers `answer` states that no text of `sources` holds, as written (a number
    grouped with spaces counts when each of its groups is known, "12 345" after 12 and 345),
    nor one arithmetic step from the numbers of one call's `arguments` (`_steps`)."""
    known = [n for text in sources for n in numbers_in(text)]
    known += [n for text in arguments for n in _steps(text)]
    odd = []
    for written, number in written_numbers(answer):
        if _free(number) or _known(number, known):
            continue
        parts = [p for p in numbers_in(written) if p != number]
        if " " in written and parts and all(_free(p) or _known(p, known) for p in parts):
            continue
        odd.append(written)
    return list(dict.fromkeys(odd))


def code_call(text: str) -> str | None:
    """The call, when `text` is a tool call written as code (`get_forecast(city="Oslo")`) with
    at most a short lead-in, or ends with one; None for an answer."""
    body = _FENCE.sub(" ", text).strip()
    calls = list(_CODE_CALL.finditer(body))
    if not calls:
        return None
    rest = _CODE_CALL.sub(" ", body)
    letters = sum(ch.isalpha() for ch in rest)
    ends_with_call = not body[calls[-1].end() :].strip(_EDGE + ")")
    return calls[0].group() if letters <= CODE_LEAD_IN or ends_with_call else None
