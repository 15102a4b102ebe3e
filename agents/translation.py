"""Translation scope: offline language detection, language facts, number formats and a glossary."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, ToolException, tool

DESCRIPTION = "language detection, language facts, number formatting and glossary terms"

DATA_DIR = Path(__file__).parent / "data"

MIN_LETTERS = 3  # fewer letters than this is too short to tell (2 for Chinese/Japanese)
MIN_EVIDENCE = 2.0  # a profile score below this is not enough evidence
MIN_MARGIN = 0.6  # best / (best + runner-up) below this is ambiguous
MAX_CONFIDENCE = 0.99
MAX_DECIMALS = 20


class TranslationError(ValueError):
    """A language or input could not be resolved."""


# --------------------------------------------------------------------------- language table


@dataclass(frozen=True)
class Language:
    """Facts about one language, loaded from data/languages.json."""

    code: str
    name: str
    native: str
    script: str
    direction: str
    aliases: tuple[str, ...]
    decimal: str
    group: str
    grouping: str  # "standard" (groups of 3) or "indian" (3, then groups of 2)
    min_grouping: int  # 2: no separator in 4-digit numbers
    minus: str
    digits: str
    quotes: str
    formality: str
    detect_script: str | None  # script whose text is scored with this profile
    stopwords: frozenset[str]
    features: tuple[tuple[str, float], ...]


def _fold(text: str) -> str:
    """Lower-case and strip accents so that 'Français' and 'francais' compare equal."""
    decomposed = unicodedata.normalize("NFD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(unicodedata.normalize("NFC", stripped).split())


def _normalise_arabic(text: str) -> str:
    """Map Arabic yeh/kaf/alef maksura to their Persian forms so stop words match either."""
    return text.replace("ي", "ی").replace("ك", "ک").replace("ى", "ی")


def _parse_language(raw: dict[str, Any]) -> Language:
    detect = raw.get("detect", {})
    return Language(
        code=raw["code"],
        name=raw["name"],
        native=raw["native"],
        script=raw["script"],
        direction=raw["direction"],
        aliases=tuple(raw.get("aliases", ())),
        decimal=raw["decimal"],
        group=raw["group"],
        grouping=raw["grouping"],
        min_grouping=raw["min_grouping"],
        minus=raw["minus"],
        digits=raw.get("digits", "0123456789"),
        quotes=raw["quotes"],
        formality=raw["formality"],
        detect_script=detect.get("script"),
        stopwords=frozenset(_normalise_arabic(w) for w in detect.get("stopwords", ())),
        features=tuple(detect.get("features", {}).items()),
    )


@cache
def languages() -> dict[str, Language]:
    """All known languages by ISO 639-1 code."""
    raw = json.loads((DATA_DIR / "languages.json").read_text(encoding="utf-8"))
    return {entry["code"]: _parse_language(entry) for entry in raw["languages"]}


@cache
def _language_index() -> dict[str, Language]:
    index: dict[str, Language] = {}
    for language in languages().values():
        for key in (language.code, language.name, language.native, *language.aliases):
            index[_fold(key)] = language
    return index


def resolve_language(name: str) -> Language:
    """Find a language by ISO code, English or native name, alias or locale tag (pt-BR)."""
    key = _fold(name)
    index = _language_index()
    if key in index:
        return index[key]
    base = re.split(r"[-_]", key, maxsplit=1)[0]
    if base in index and len(base) in (2, 3):
        return index[base]
    matches = get_close_matches(key, list(index), n=3, cutoff=0.6)
    suggestions = list(dict.fromkeys(f"{index[m].name} ({index[m].code})" for m in matches))
    hint = f"did you mean {' or '.join(suggestions)}? " if suggestions else ""
    msg = f"unknown language {name!r}; {hint}known languages: {', '.join(sorted(languages()))}"
    raise TranslationError(msg)


# --------------------------------------------------------------------------- detection

_SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "Latin"),
    (0x1E00, 0x1EFF, "Latin"),
    (0x0370, 0x03FF, "Greek"),
    (0x1F00, 0x1FFF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0530, 0x058F, "Armenian"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0750, 0x077F, "Arabic"),
    (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFF, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0980, 0x09FF, "Bengali"),
    (0x0B80, 0x0BFF, "Tamil"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x10A0, 0x10FF, "Georgian"),
    (0x1100, 0x11FF, "Hangul"),
    (0x3130, 0x318F, "Hangul"),
    (0xAC00, 0xD7AF, "Hangul"),
    (0x3040, 0x30FF, "Kana"),
    (0x31F0, 0x31FF, "Kana"),
    (0xFF66, 0xFF9F, "Kana"),
    (0x3400, 0x4DBF, "Han"),
    (0x4E00, 0x9FFF, "Han"),
    (0xF900, 0xFAFF, "Han"),
    (0x20000, 0x2FA1F, "Han"),
)

# Scripts used (among the covered languages) by one language only: (code, base confidence).
_SINGLE_LANGUAGE_SCRIPTS: dict[str, tuple[str, float]] = {
    "Greek": ("el", 0.95),
    "Hebrew": ("he", 0.95),
    "Devanagari": ("hi", 0.85),  # Marathi and Nepali share the script
    "Hangul": ("ko", 0.97),
    "Thai": ("th", 0.97),
}

_TOKEN = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Detection:
    """Result of detect(): an ISO code or 'unknown', a 0-1 confidence and a runner-up."""

    language: str
    confidence: float
    runner_up: str | None
    script: str
    note: str = ""


def script_of(char: str) -> str:
    """Name the Unicode script block of a character ('Other' when not covered)."""
    point = ord(char)
    for start, end, script in _SCRIPT_RANGES:
        if start <= point <= end:
            return script
    return "Other"


def _unknown(script: str, note: str) -> Detection:
    return Detection("unknown", 0.0, None, script, note)


@cache
def _stopword_weights(script: str) -> dict[str, float]:
    """Weight each stop word 1/n, n = number of languages of script that list it."""
    counts = Counter(
        word
        for language in languages().values()
        if language.detect_script == script
        for word in language.stopwords
    )
    return {word: 1 / n for word, n in counts.items()}


def _profile_scores(text: str, script: str) -> dict[str, float]:
    """Score each language written in script: weighted stop-word hits plus features."""
    folded = text.casefold()
    tokens = _TOKEN.findall(folded)
    if script == "Arabic":
        tokens = [_normalise_arabic(token) for token in tokens]
    weights = _stopword_weights(script)
    scores: dict[str, float] = {}
    for language in languages().values():
        if language.detect_script != script:
            continue
        words = sum(weights[token] for token in tokens if token in language.stopwords)
        features = sum(weight * folded.count(feature) for feature, weight in language.features)
        scores[language.code] = words + features
    return scores


def detect(text: str) -> Detection:
    """Guess the language of text from its script, stop words and characteristic letters."""
    text = unicodedata.normalize("NFC", text)
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return _unknown("none", "no letters to analyse")
    counts = Counter(script_of(ch) for ch in letters)
    groups = Counter({s: n for s, n in counts.items() if s not in ("Han", "Kana")})
    if counts["Han"] or counts["Kana"]:
        groups["Han/Kana"] = counts["Han"] + counts["Kana"]
    script, count = groups.most_common(1)[0]
    share = count / len(letters)
    if script == "Han/Kana":
        if count < 2:
            return _unknown(script, "too short to tell")
        if counts["Kana"]:
            return Detection("ja", round(0.97 * share, 2), None, "Han/Kana")
        note = "Han characters only; Japanese written without kana would look the same"
        return Detection("zh", round(0.8 * share, 2), "ja", "Han", note)
    if len(letters) < MIN_LETTERS:
        return _unknown(script, "too short to tell")
    if script in _SINGLE_LANGUAGE_SCRIPTS:
        code, base = _SINGLE_LANGUAGE_SCRIPTS[script]
        factor = 1.0 if count >= 4 else 0.8
        return Detection(code, round(base * share * factor, 2), None, script)
    scores = _profile_scores(text, script)
    if not scores:
        what = "this script" if script == "Other" else f"the {script} script"
        return _unknown(script, f"{what} is not covered")
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    (best, best_score), (second, second_score) = ranked[0], ranked[1]
    if best_score < MIN_EVIDENCE:
        guess = f"; weak guess: {best}" if best_score > 0 else ""
        return _unknown(script, f"not enough evidence (too short or no common words){guess}")
    margin = best_score / (best_score + second_score)
    if margin < MIN_MARGIN:
        return _unknown(script, f"ambiguous between {best} and {second}")
    evidence = min(1.0, best_score / 6)
    confidence = min(MAX_CONFIDENCE, margin * (0.6 + 0.4 * evidence) * share)
    return Detection(best, round(confidence, 2), second if second_score > 0 else None, script)


# --------------------------------------------------------------------------- numbers

_SEPARATOR_NAMES = {
    ",": "comma",
    ".": "period",
    "\u00a0": "no-break space U+00A0",
    "\u202f": "narrow no-break space U+202F",
    "٫": "Arabic decimal separator U+066B",
    "٬": "Arabic thousands separator U+066C",
}


def _group_digits(digits: str, language: Language) -> str:
    if len(digits) < 3 + language.min_grouping:
        return digits
    head, groups = digits[:-3], [digits[-3:]]
    size = 2 if language.grouping == "indian" else 3
    while head:
        groups.insert(0, head[-size:])
        head = head[:-size]
    return language.group.join(groups)


def localize_number(value: float, language: str | Language, decimals: int | None = None) -> str:
    """Format value with the language's separators, grouping, minus sign and digits."""
    lang = language if isinstance(language, Language) else resolve_language(language)
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"value must be a number, got {value!r}"
        raise TranslationError(msg)
    if isinstance(value, float) and not math.isfinite(value):
        msg = "value must be a finite number"
        raise TranslationError(msg)
    if decimals is not None and not 0 <= decimals <= MAX_DECIMALS:
        msg = f"decimals must be between 0 and {MAX_DECIMALS}"
        raise TranslationError(msg)
    with localcontext() as context:
        context.prec = 400
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if decimals is not None:
            number = number.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
        text = format(number, "f")
    negative = text.startswith("-")
    integer, _, fraction = text.lstrip("-").partition(".")
    if decimals is None:
        fraction = fraction.rstrip("0")
    if not (integer + fraction).strip("0"):
        negative = False  # never print "-0"
    result = _group_digits(integer, lang) + (lang.decimal + fraction if fraction else "")
    result = result.translate(str.maketrans("0123456789", lang.digits))
    return (lang.minus if negative else "") + result


def describe_language(language: Language) -> str:
    """Summarise what a translator needs to know about writing in language."""
    direction = "right-to-left" if language.direction == "rtl" else "left-to-right"
    decimal = _SEPARATOR_NAMES.get(language.decimal, repr(language.decimal))
    group = _SEPARATOR_NAMES.get(language.group, repr(language.group))
    lines = [
        f"{language.name} ({language.code}); native name: {language.native}",
        f"script: {language.script}; direction: {direction}",
        f"numbers: decimal separator {decimal}, thousands separator {group}; "
        f"e.g. {localize_number(1234567.89, language)}",
    ]
    if language.min_grouping > 1:
        lines.append(f"4-digit numbers are not grouped: {localize_number(3901, language)}")
    if language.grouping == "indian":
        lines.append("grouping: Indian system (lakh/crore), e.g. 1,00,000 = one lakh")
    if language.digits != "0123456789":
        lines.append(f"digits: {language.digits} (native digits are the default)")
    if language.minus not in ("-", ""):
        code_points = " + ".join(f"U+{ord(ch):04X}" for ch in language.minus)
        lines.append(f"minus sign: {code_points}")
    lines.append(f"quotation marks: {language.quotes}")
    lines.append(f"address: {language.formality}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- glossary


@dataclass(frozen=True)
class GlossaryEntry:
    """One glossary term with its approved translations by language code."""

    term: str
    translations: dict[str, str]
    note: str = ""
    do_not_translate: bool = False


@dataclass(frozen=True)
class Glossary:
    """The project glossary: entries indexed by normalised term and alias."""

    index: dict[str, GlossaryEntry]
    variants: dict[str, str]


def _term_key(term: str) -> str:
    return " ".join(term.casefold().replace("-", " ").strip(" \t\n\"'“”‘’«».").split())


@cache
def glossary() -> Glossary:
    """Load data/glossary.json."""
    raw = json.loads((DATA_DIR / "glossary.json").read_text(encoding="utf-8"))
    index: dict[str, GlossaryEntry] = {}
    for term, data in raw["terms"].items():
        entry = GlossaryEntry(
            term=term,
            translations=dict(data.get("translations", {})),
            note=data.get("note", ""),
            do_not_translate=data.get("do_not_translate", False),
        )
        for key in (term, *data.get("aliases", ())):
            index[_term_key(key)] = entry
    return Glossary(index=index, variants=dict(raw.get("variants", {})))


def lookup_term(term: str, target_language: str) -> str:
    """Return the approved translation of term, or say plainly that there is none."""
    language = resolve_language(target_language)
    key = _term_key(term)
    if not key:
        msg = "term is empty"
        raise TranslationError(msg)
    data = glossary()
    entry = data.index.get(key)
    if entry is None and key.endswith("s") and len(key) > 3:
        entry = data.index.get(key[:-1])  # plural of a glossary term
    if entry is None:
        similar = get_close_matches(key, list(data.index), n=3, cutoff=0.75)
        hint = f" Similar glossary terms: {', '.join(similar)}." if similar else ""
        return (
            f"{term!r} is not in the glossary, so there is no approved translation; "
            f"translate it yourself.{hint}"
        )
    if entry.do_not_translate:
        return f"{entry.term!r} is a protected name ({entry.note}): keep it untranslated."
    translation = entry.translations.get(language.code)
    if translation is None:
        available = ", ".join(sorted(entry.translations))
        return (
            f"{entry.term!r} is in the glossary but has no approved {language.name} translation "
            f"(approved for: {available}); translate it yourself."
        )
    variant = data.variants.get(language.code)
    target = f"{language.name} ({variant})" if variant else language.name
    note = f" [note: {entry.note}]" if entry.note else ""
    return f"{entry.term} -> {target}: {translation}{note}"


# --------------------------------------------------------------------------- tools


def _tool_error(exc: Exception) -> ToolException:
    return ToolException(str(exc))


@tool(parse_docstring=True)
def detect_language(text: str) -> str:
    """Guess the language of a text offline (script, common words, letters); it does not translate.

    Returns an ISO 639-1 code with a 0-1 confidence and a runner-up, or 'unknown' when the text
    is too short or ambiguous. Covers ar cs de el en es fa fi fr he hi id it ja ko nl pl pt ru
    sv th tr uk zh.

    Args:
        text: The text to identify; a full sentence gives a reliable answer.
    """
    result = detect(text)
    lines = [f"language: {result.language}"]
    if result.language != "unknown":
        lines[0] += f" ({languages()[result.language].name})"
        lines.append(f"confidence: {result.confidence:.2f}")
    if result.runner_up:
        lines.append(f"runner-up: {result.runner_up} ({languages()[result.runner_up].name})")
    lines.append(f"script: {result.script}")
    if result.note:
        lines.append(f"note: {result.note}")
    return "\n".join(lines)


@tool(parse_docstring=True)
def language_info(language: str) -> str:
    """Look up facts for writing in a language; you do the translating, this gives conventions.

    Returns ISO 639-1 code, English and native names, script, direction, decimal and thousands
    separators, quotation marks and how to address the reader formally or informally.

    Args:
        language: Language name or code, e.g. "German", "de", "Deutsch" or "pt-BR".
    """
    try:
        return describe_language(resolve_language(language))
    except TranslationError as exc:
        raise _tool_error(exc) from exc


@tool(parse_docstring=True)
def format_number(value: float, language: str, decimals: int | None = None) -> str:
    """Write a number the way a language writes it (separators, grouping, digits, minus sign).

    E.g. 3901.5 -> French "3 901,5" (narrow no-break space), German "3.901,5", Hindi
    "39,01,234" for 3901234. Use it for numbers in translated text.

    Args:
        value: The number to format.
        language: Language name or code of the target text.
        decimals: Fixed number of decimal places (rounded half up); omit to keep the value's digits.
    """
    try:
        return localize_number(value, language, decimals)
    except TranslationError as exc:
        raise _tool_error(exc) from exc


@tool(parse_docstring=True)
def glossary_lookup(term: str, target_language: str) -> str:
    """Look up the approved translation of a product or UI term in the project glossary.

    Check terminology here before translating it; for terms not in the glossary the tool says
    so and you translate them yourself. Protected names are reported as not to be translated.

    Args:
        term: The English source term, e.g. "sign in" or "shopping cart".
        target_language: Language name or code to translate into.
    """
    try:
        return lookup_term(term, target_language)
    except TranslationError as exc:
        raise _tool_error(exc) from exc


TOOLS: list[BaseTool] = [detect_language, language_info, format_number, glossary_lookup]
for _tool in TOOLS:  # every tool here only reads: code (the selector) may open them
    _tool.metadata = {**(_tool.metadata or {}), "risk": "read"}
for _tool in TOOLS:
    _tool.handle_tool_error = True
