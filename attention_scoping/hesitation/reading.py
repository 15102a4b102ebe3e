"""Reading a model message and the user's request for the hesitation radar: sentences, lists,
marker hits, which disclosed parameters the message names or asks for, and which values the
request already holds. Framework-free; the scorer (`rules`) turns this into a verdict.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from attention_scoping.hesitation.markers import (
    REQUEST_CATEGORIES,
    HesitationMarkers,
    category_enabled,
)
from attention_scoping.hesitation.schemas import COMMON_WORDS, ParamInfo, name_words

__all__ = ["Mention", "MessageReading", "RequestReading"]

_SENTENCE = re.compile(r"(?<=[.!?:;])\s+|\n+")
_LIST_LINE = re.compile(r"^\s*(?:[-*•·‣▪◦]|\d{1,2}[.)]|[a-z][.)])\s+(?P<body>.+)$", re.I)
_LABEL_LINE = re.compile(
    r"^\s*[*_`\"']{0,2}(?P<label>[A-Za-z][\w .\-/]{0,40}?)[*_`\"']{0,2}\s*[:=]"
)
_LABEL_IN_ITEM = re.compile(
    r"^[*_`\"']{0,2}(?P<label>[A-Za-z][\w .\-/]{0,40}?)[*_`\"']{0,2}"
    r"(?:\s*[:=(—–]|\s+-\s|\s*$)"
)
_TYPE_WORDS = re.compile(
    r"\([^()]*?\b(?:string|str|integer|int|number|float|bool|boolean|array|list|object|dict|"
    r"enum|date|datetime|timestamp|required|optional)\b[^()]*\)|\b(?:required|optional)\b",
    re.I,
)
_FIELD_WRAP = "`*\"'“”‘’_["
_QUOTED = re.compile(r"```.*?```|`[^`\n]+`|\"[^\"\n]{4,}\"|“[^”\n]{4,}”", re.S)
_UNIT_WORDS_TEXT = """
    c count days eur f hours hrs id ids iso min mins minutes ms num number pct percent sec
    seconds secs ts url usd utc
"""
_UNIT_WORDS = frozenset(_UNIT_WORDS_TEXT.split())


@dataclass
class Mention:
    strength: float
    sentences: set[int] = field(default_factory=set)
    in_list: bool = False
    group: str = ""
    """What matched; two parameters matched by the same words count as one mention."""
    default_only: bool = False
    """Only mentioned to state its default ("access will default to viewer"): not asked."""


@dataclass
class _Tally:
    """Matches of one parameter while reading a message."""

    group: str
    best: float = 0.0
    where: set[int] = field(default_factory=set)
    seen: int = 0
    stated: int = 0
    """Matches in a clause that states a default."""

    def add(self, strength: float, sentence: int, states_default: bool) -> None:
        self.best = max(self.best, strength)
        self.where.add(sentence)
        self.seen += 1
        self.stated += states_default


_PERMISSION = re.compile(
    r"^[\s\"'“”*_]*(?:(?:so|ok|okay|great|alright|then|and)[,.]?\s+)?"
    r"(?:shall|should|may|can|could|do) (?:i|we) \w+"
)


_ASKED_WORD = re.compile(r"\b(?:what|which)\s+$", re.I)
_KIND_QUESTION = re.compile(
    r"\bhow (?:many|much)\b(?: (?P<noun>[a-z]+))?|\bhow long\b|\bwhat (?:amount|quantity|"
    r"number of)\b|\b(?:what|which) (?:day|date)s?\b|\bwhat time\b|\bwhen\b|"
    r"\b(?:what|which) (?:phone )?number\b|\bphone number\b|\bemail address(?:es)?\b|"
    r"\bwho(?:m)?\b",
    re.I,
)
_KIND_PHRASES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"^how |^what (?:amount|quantity|number of)"), frozenset({"number"})),
    (re.compile(r"day|date"), frozenset({"date", "datetime"})),
    (re.compile(r"time"), frozenset({"time", "datetime"})),
    (re.compile(r"^when"), frozenset({"date", "time", "datetime"})),
    (re.compile(r"number"), frozenset({"phone"})),
    (re.compile(r"email"), frozenset({"email"})),
    (re.compile(r"^who"), frozenset({"email", "phone"})),
)
"""Question phrases and the kinds of value they ask for (see `ParamInfo.kind`)."""
_DURATION_WORDS = frozenset(
    "duration minutes mins seconds secs hours hrs days weeks timeout until length hold".split()
)

_WH = re.compile(
    r"\b(?:what(?:'s)?|which|when|who(?:m|se)?|where|why|how(?: \w+)?|whether)\b", re.I
)
# Possessive words that start at a word boundary: a 64 KB run of letters is read once, not once
# per starting letter (the old pattern backtracked through it quadratically).
_ITEM = r"[\w'’/-]++(?: [\w'’/-]++){0,3}"
_ENUM = re.compile(
    rf"(?<![\w'’/-]){_ITEM}(?:\s*+,\s*+{_ITEM}){{1,}}(?:,?\s+(?:and|or|&)\s+{_ITEM})?", re.I
)


def _enumerations(text: str) -> list[list[str]]:
    """Comma-separated lists of three or more short items ("title, message and time")."""
    out: list[list[str]] = []
    for match in _ENUM.finditer(text):
        items = re.split(r"\s*,\s*|,?\s+(?:and|&)\s+", match.group(0))
        items = [i for i in items if i]
        if len(items) >= 3:
            out.append(items)
    return out


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def _sentences(text: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each sentence-like piece (split at . ! ? : ; and newlines)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for match in _SENTENCE.finditer(text):
        piece = text[pos : match.start()]
        if piece.strip():
            out.append((pos, match.start(), piece))
        pos = match.end()
    if text[pos:].strip():
        out.append((pos, len(text), text[pos:]))
    return out


_LIST_PREFIX_CHARS = 24
"""Longest line prefix before a name that still reads as a list marker ("  12. **")."""


def _field_like(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if before in _FIELD_WRAP or after in _FIELD_WRAP:
        return True
    if re.match(r"\s*(?:[:=]|\((?:[a-z ,|]+)\))", text[end : end + 24]):
        return True
    line_start = text.rfind("\n", max(0, start - _LIST_PREFIX_CHARS - 1), start) + 1
    if line_start == 0 and start > _LIST_PREFIX_CHARS:
        return False  # no line start near: not a list item (and no scan back to the start)
    return bool(
        re.fullmatch(r"\s*(?:[-*•·‣▪◦]|\d{1,2}[.)])\s*[*_`\"']{0,2}", text[line_start:start])
    )


def _word_regex(words: Sequence[str]) -> re.Pattern[str]:
    parts = [re.escape(w) for w in words]
    if len(words[-1]) > 4 and words[-1].endswith("ies"):
        parts[-1] = re.escape(words[-1][:-3]) + "(?:y|ie)"  # `retries` <- "retry"
    body = r"[\s_\-]+".join(parts)
    return re.compile(rf"(?<![A-Za-z0-9]){body}s?(?![A-Za-z0-9])", re.I)


_NOT_IN_MESSAGE = REQUEST_CATEGORIES | {"pleasantry"}
"""Marker categories not looked for in the message (courtesy, and those of the request)."""

_DEFAULT_TALK = re.compile(r"\bdefault(?:s|ed)?\b|\bif (?:omitted|unset|not set)\b", re.I)
_CLAUSE_END = re.compile(r"[.;!?\n,(—–]")
_NEAR_CHARS = 80
"""Characters read on each side of an "or" for the alternatives it joins."""
_CHOICE_TOKEN = re.compile(r"[\w#@./-]*[#@._/\d][\w#@./-]*")

_NUMBER = re.compile(
    r"(?<![\w.#/-])(?:[$€£¥]\s?)?\d+(?:[.,]\d+)?(?![\w-]|[.,:/]\d)|\b(?:one|two|three|four|"
    r"five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|"
    r"dozen|couple|pair|half|zero|single|double)\b",
    re.I,
)
_ID_NOUN = re.compile(
    r"\b(?:id|ticket|order|issue|pr|invoice|case|no\.?|number|room|account|build|version|job|"
    r"step|line|page|row|item|table|apt|suite|floor|v)\s*#?\s*$",
    re.I,
)


def _has_amount(text: str) -> bool:
    """An amount or count in a user's words (not an ID: "ticket 4411", "PR #482", "v2.15.0")."""
    return any(not _ID_NOUN.search(text[: m.start()]) for m in _NUMBER.finditer(text))


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?\d[\d ().-]{6,}\d")
_TIME = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}[:h]\d{2}\b|\b(?:noon|midnight|"
    r"o'clock)\b|\bin (?:an?|\d+|one|two|three|five|ten|fifteen|thirty) (?:minutes?|mins?|"
    r"hours?|hrs?|days?|weeks?)\b|\+\d+\s?[mhd]\b|\bnow\b|\bright away\b",
    re.I,
)
"""A clock time or an offset ("tonight" or "Monday morning" is not yet a time)."""
_DATE = re.compile(
    r"\b(?:today|tomorrow|tonight|yesterday|(?:this|next|last) (?:week|month|weekend|year)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|weekend|jan(?:uary)?|feb(?:ruary)?|"
    r"mar(?:ch)?|apr(?:il)?|may(?= \d)|june?|july?|aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|"
    r"nov(?:ember)?|dec(?:ember)?)\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)\b",
    re.I,
)
_KIND_TESTS: dict[str, Callable[[str], object]] = {
    "number": _has_amount,
    "email": _EMAIL.search,
    "phone": _PHONE.search,
    "date": _DATE.search,
    "time": _TIME.search,
    "datetime": _TIME.search,
    "url": re.compile(r"https?://\S+|\bwww\.\S+", re.I).search,
    "path": re.compile(r"(?:^|\s)[~.]?/?[\w.-]+/[\w./-]+|\b[\w-]+\.[a-z][a-z0-9]{1,4}\b").search,
    "channel": re.compile(r"(?<!\w)#[a-z][\w-]*", re.I).search,
    "repo": re.compile(r"\b[\w.-]+/[\w.-]+\b").search,
    "id": re.compile(r"\b[a-z]+[_-][\w-]*\d[\w-]*\b|\b\d{2,}-\d+\b|\b[a-z]+\d{3,}\b", re.I).search,
    "text": re.compile(r"'[^'\n]{3,}'|\"[^\"\n]{3,}\"|“[^”\n]{3,}”|`[^`\n]+`|\w:\s+\S").search,
}
"""What a value of each kind looks like in a user's words (a date alone starts no event)."""
_WEAK_KINDS = frozenset({"url", "path", "channel", "repo", "id", "text"})
"""Kinds whose absence from a request proves nothing (a body can be paraphrased, an ID named)."""


_REQUEST_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")
"""A sentence of the user's request."""


class RequestReading:
    """The user's message the model answered, if the caller passed it."""

    def __init__(self, text: str | None, markers: HesitationMarkers):
        self.text = text or ""
        compiled = markers.compiled
        self.about_tool = self._first(compiled["tool_question"], self.text)
        self.review = self._first(compiled["review_first"], self.text)
        asks_text = self._first(compiled["text_request"], self.text)
        acts_self = self._first(compiled["acts_themselves"], self.text)
        action = self._first(compiled["action_request"], self.text)
        command = self._first(compiled["action_command"], self.text)
        wanted = (acts_self or asks_text) if (acts_self or not action) else ""
        self.wants_text = "" if command else wanted
        """The phrase saying the request asks for text, an explanation or a draft and not for
        the action, or that the user acts themselves; "" otherwise."""
        asks_fields = self._asks_for_fields(compiled["list_question"], compiled["needed_words"])
        self.fields_asked = "" if (command or action) else asks_fields
        """The sentence by which the request asks what a tool needs, takes or is made of (a
        question or an ask to list or describe, about requirements or fields), and asks for no
        action; "" otherwise."""

    def _asks_for_fields(
        self, asking: re.Pattern[str] | None, needed: re.Pattern[str] | None
    ) -> str:
        """The first sentence that asks (a question, or list / describe / outline) and, after
        the asking words, speaks of what is needed, taken or made of; "" when none does."""
        if asking is None or needed is None or not self.text:
            return ""
        for match in _REQUEST_SENTENCE.finditer(self.text):
            sentence = match.group(0)
            ask = asking.search(sentence)
            if ask is not None and needed.search(sentence, ask.end()):
                return sentence.strip()
        return ""

    @staticmethod
    def _first(pattern: re.Pattern[str] | None, text: str) -> str:
        found = pattern.search(text) if pattern is not None and text else None
        return found.group(0).strip() if found else ""

    def supplies(self, param: ParamInfo) -> bool | None:
        """Whether the request holds a value for `param`: True, False, or None (can't tell)."""
        if not self.text.strip():
            return None
        if param.choices:
            words = {w.lower() for w in re.findall(r"[\w-]{3,}", self.text)}
            for choice in param.choices:
                c = choice.lower()
                if len(c) >= 2 and (
                    re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", self.text, re.I)
                    or re.search(rf"(?<![\w-]){re.escape(c.replace('_', ' '))}\b", self.text, re.I)
                    or any(len(w) >= 4 and c.startswith(w) for w in words)
                ):
                    return True
            if not param.kind:
                return False
        test = _KIND_TESTS.get(param.kind)
        if test is None:
            return None
        if test(self.text):
            return True
        return None if param.kind in _WEAK_KINDS else False


class MessageReading:
    """Everything the scorer needs from one message: sentences, lists, markers, mentions."""

    def __init__(self, text: str, params: Sequence[ParamInfo], markers: HesitationMarkers):
        compiled = markers.compiled
        pleasantry = compiled["pleasantry"]
        self.text = text
        # Quoted content (a message body, a title, code) is what the model would send, not what
        # it says, and courtesy phrases ask nothing: markers are looked for outside both.
        # Blanking keeps the offsets, so sentences line up with `text`.
        said = _QUOTED.sub(_blank, text)
        self.said = pleasantry.sub(_blank, said) if pleasantry is not None else said
        self.sentences = _sentences(self.text)
        self._starts = [start for start, _, _ in self.sentences]
        self._clause_ends = [m.start() for m in _CLAUSE_END.finditer(self.text)]
        self._default_talk: dict[tuple[int, int], bool] = {}
        self.hits: dict[str, list[str]] = {}
        self.hit_sentences: dict[str, set[int]] = {}
        for category, pattern in compiled.items():
            if category in _NOT_IN_MESSAGE or pattern is None:
                continue
            found = [m for m in pattern.finditer(self.said) if not self._negated(category, m)]
            self.hits[category] = [m.group(0).strip() for m in found]
            self.hit_sentences[category] = {self._sentence_at(m.start()) for m in found}
        self.questions = {
            i for i, (start, end, _) in enumerate(self.sentences) if "?" in self.said[start:end]
        }
        # "Shall I send it?" asks permission; "Should I use staging or prod?" asks a value.
        for i in sorted(self.questions):
            start, end, _ = self.sentences[i]
            question = self.said[start:end].strip().lower()
            yes_no = _PERMISSION.match(question)
            if yes_no and " or " not in question and category_enabled(markers, "confirmation"):
                self.hits.setdefault("confirmation", []).append(yes_no.group(0))
                self.hit_sentences.setdefault("confirmation", set()).add(i)
        self.list_labels = self._list_labels()
        self.inline_lists = self._inline_lists(params)
        self.mentions = self._mentions(params)
        self.kind_asks = self._kind_asks(params)

    def _negated(self, category: str, match: re.Match[str]) -> bool:
        """A completion under negation ("has not been created") reports nothing done."""
        if category != "completion":
            return False
        window = self.said[max(0, match.start() - 24) : match.end()].lower()
        return bool(re.search(r"\b(?:not|n't|never|nothing|no longer|yet to)\b", window))

    def _sentence_at(self, offset: int) -> int:
        """The sentence holding `offset` (the last one for an offset between sentences)."""
        i = bisect_right(self._starts, offset) - 1
        if i >= 0 and offset < self.sentences[i][1]:
            return i
        return max(0, len(self.sentences) - 1)

    def _list_labels(self) -> list[tuple[str, bool]]:
        """(label, schema-like) per list or `label:` line."""
        out: list[tuple[str, bool]] = []
        for line in self.text.splitlines():
            item = _LIST_LINE.match(line)
            body = item.group("body") if item else None
            labelled = _LABEL_IN_ITEM.match(body) if body is not None else _LABEL_LINE.match(line)
            if labelled is None:
                continue
            typed = bool(_TYPE_WORDS.search(line))
            out.append((labelled.group("label").strip(" *_`'\"").lower(), typed))
        return out

    def _inline_lists(self, params: Sequence[ParamInfo]) -> list[set[str]]:
        """Per inline enumeration naming two or more parameters: the parameter names in it."""
        out: list[set[str]] = []
        for items in _enumerations(self.text):
            named: set[str] = set()
            for item in items:
                item_words = set(name_words(item.strip(" *`'\"()")))
                for param in params:
                    content = {w for w in param.words if w not in _UNIT_WORDS} or set(param.words)
                    if content and content <= item_words:
                        named.add(param.name)
            if len(named) >= 2:
                out.append(named)
        return out

    def _mentions(self, params: Sequence[ParamInfo]) -> dict[str, Mention]:
        """Disclosed parameters the message names, the strongest mention per name."""
        mentions: dict[str, Mention] = {}
        labels = [set(name_words(label)) for label, _ in self.list_labels]
        for param in params:
            found = self._mention(param, labels)
            previous = mentions.get(param.name)
            if found is not None and (previous is None or previous.strength < found.strength):
                mentions[param.name] = found
        return mentions

    def _mention(self, param: ParamInfo, labels: Sequence[set[str]]) -> Mention | None:
        """How strongly, where and how the message names `param` (None: not at all)."""
        if not param.words:
            return None
        tally = _Tally(group=param.name.lower())
        for regex in {_word_regex(param.words), _word_regex((param.name.lower(),))}:
            for m in regex.finditer(self.text):
                strength = self._strength(param, m)
                if strength:
                    states = self._states_default(m.start(), m.end())
                    tally.add(strength, self._sentence_at(m.start()), states)
        in_list = any(
            lw and (lw == set(param.words) or (lw <= set(param.words) and len(lw) >= 1))
            for lw in labels
        ) or any(param.name in listed for listed in self.inline_lists)
        if in_list:
            tally.best = max(tally.best, 1.0)
        if tally.best == 0.0 and param.identifier:
            self._loose_mention(param, tally)
        if tally.best == 0.0:
            return None
        default_only = not in_list and tally.seen > 0 and tally.stated == tally.seen
        return Mention(tally.best, tally.where, in_list, tally.group, default_only)

    def _strength(self, param: ParamInfo, m: re.Match[str]) -> float:
        """How surely one match names `param`: 1.0 as a field, 0.75 or 0.35 in prose, 0 not."""
        matched = self.text[m.start() : m.end()].lower()
        exact = matched.rstrip("s") == param.name.lower() or matched == param.name.lower()
        if (param.identifier and exact) or _field_like(self.text, m.start(), m.end()):
            return 1.0
        if param.common:
            # "What path should I use?": a common word named as the thing asked.
            asked = _ASKED_WORD.search(self.said[max(0, m.start() - 12) : m.start()])
            if not asked or self._sentence_at(m.start()) not in self.questions:
                return 0.0
            return 0.35
        return 0.75 if param.identifier else 0.35

    def _loose_mention(self, param: ParamInfo, tally: _Tally) -> None:
        """All content words of a multi-word name in one sentence (units aside: "timeout" for
        `timeout_seconds`): a loose mention."""
        content = [
            w for w in param.words if w not in COMMON_WORDS and w not in _UNIT_WORDS and len(w) > 2
        ]
        if not content:
            return
        for i, (_, _, sentence) in enumerate(self.sentences):
            if all(_word_regex((w,)).search(sentence) for w in content):
                tally.best = 0.35
                tally.group = " ".join(content)
                tally.add(0.35, i, bool(_DEFAULT_TALK.search(sentence)))

    def _kind_asks(self, params: Sequence[ParamInfo]) -> dict[str, str]:
        """Parameters a question asks for by the kind of value, not by name.

        "How many people?" asks for a number, "what time?" for a time: the parameters of that
        kind (those whose words follow "how many", if any) are asked, grouped by the phrase.
        """
        out: dict[str, str] = {}
        for i in sorted(self.questions):
            start, end, _ = self.sentences[i]
            piece = self.said[start:end]
            for match in _KIND_QUESTION.finditer(piece):
                phrase = match.group(0).lower()
                noun = (match.group("noun") or "").lower().rstrip("s")
                kinds = next(k for p, k in _KIND_PHRASES if p.search(phrase))
                pool = [p for p in params if p.kind in kinds]
                if phrase.startswith("how long"):
                    pool = [p for p in pool if set(p.words) & _DURATION_WORDS] or pool
                if noun:
                    named = [p for p in pool if noun in {w.rstrip("s") for w in p.words}]
                    pool = named or pool
                if phrase.startswith("who"):
                    pool = [p for p in pool if p.critical]  # a recipient, not a cc
                if any(p.name in self.mentions for p in pool):
                    continue  # the message names the parameter it is about
                for p in pool:
                    out.setdefault(p.name, f"<{phrase.split()[0]} {sorted(kinds)[0]}>")
        return out

    def _states_default(self, start: int, end: int) -> bool:
        """Whether the clause around a mention states a default ("role defaults to viewer")."""
        ends = self._clause_ends
        before = bisect_left(ends, start)
        left = ends[before - 1] + 1 if before else 0
        after = bisect_left(ends, end)
        right = ends[after] if after < len(ends) else len(self.text)
        key = (left, right)
        if key not in self._default_talk:  # one read per clause, however many names it holds
            self._default_talk[key] = bool(_DEFAULT_TALK.search(self.text, left, right))
        return self._default_talk[key]

    @cached_property
    def offers_choices(self) -> bool:
        """A question that names concrete alternatives it found ("acme.io or acme.dev?")."""
        for i in self.questions:
            start, end, _ = self.sentences[i]
            piece = self.said[start:end]
            for m in re.finditer(r"\s+or\s+", piece):
                # The words next to "or" (a bounded look either side, not the whole sentence).
                before = piece[max(0, m.start() - _NEAR_CHARS) : m.start()].rstrip(" )—–-,").split()
                after = piece[m.end() : m.end() + _NEAR_CHARS].split()
                near = [before[-1]] if before else []
                near += after[:1]
                if any(_CHOICE_TOKEN.fullmatch(t.strip("()?,.'\"`")) for t in near):
                    return True
        return False

    @cached_property
    def asks(self) -> int:
        """How many things the message asks for: questions, wh-words, enumerated items."""
        count = 0
        for i in self.asked_sentences():
            start, end, _ = self.sentences[i]
            piece = self.said[start:end]
            wh = len(_WH.findall(piece)) if i in self.questions else 0
            # "tell me X and how urgent it is": a second thing asked after "and".
            wh += len(re.findall(r"\band (?=(?:what|which|when|who|where|how|whether)\b)", piece))
            items = max((len(e) for e in _enumerations(piece) if " or " not in e[-1]), default=0)
            count += max(wh, items, 1 if i in self.questions else 0)
        return count

    @cached_property
    def open_question(self) -> bool:
        """Whether the message asks for a value (wh- or either/or question, or a request)."""
        if self.hits.get("request"):
            return True
        for i in self.questions:
            start, end, _ = self.sentences[i]
            piece = self.said[start:end].lower()
            if _WH.search(piece) or " or " in piece:
                return True
        return False

    def asked_sentences(self) -> set[int]:
        """Sentences that ask: questions, requests, confirmations, and what follows a colon."""
        asked = set(self.questions)
        for category in ("request", "confirmation"):
            asked |= self.hit_sentences.get(category, set())
        for i in list(asked):
            if self.sentences[i][2].rstrip().endswith(":"):
                asked.add(i + 1)
        return asked
