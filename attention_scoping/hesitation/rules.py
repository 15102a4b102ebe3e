"""The hesitation radar's rules: a table of named signals and the scorer that sums them.

`Evidence` reads what a message and the user's request show (each fact a small property);
`RULES` says which facts count and how much, one `Rule` per signal, in the order they are
added; `score` sums the rules that fire and explains each contribution. Framework-free.

To change a weight or drop a signal, pass your own table to `detect_hesitation(rules=...)`:

Example:
    ```python
    from dataclasses import replace
    from attention_scoping.hesitation.rules import RULES

    softer = tuple(replace(r, weight=1.0) if r.name == "confirmation" else r for r in RULES)
    detect_hesitation(text, schemas, rules=softer)
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from attention_scoping.common.text import listing
from attention_scoping.hesitation.reading import MessageReading, RequestReading
from attention_scoping.hesitation.schemas import ParamInfo

__all__ = ["ALL", "RULES", "Category", "Contribution", "Evidence", "Rule", "score"]

Category = Literal["structure", "echo", "asking", "confirming", "legitimate", "request"]
"""What a signal is about: a field list (`structure`), parameters named in prose (`echo`),
questions and requests for values (`asking`), asking leave or promising (`confirming`), what a
legitimate answer looks like (`legitimate`), and the user's request (`request`)."""

ALL: frozenset[Category] = frozenset(
    {"structure", "echo", "asking", "confirming", "legitimate", "request"}
)


@dataclass(frozen=True)
class Rule:
    """One signal of the radar.

    Attributes:
        name: A stable name (for logs, tests and tables that change a weight).
        category: What the signal is about (see `Category`).
        when: The `Evidence` property that must be truthy for the rule to fire.
        weight: Its contribution (negative: evidence of a legitimate message).
        scale: `Evidence` properties multiplied into the weight, left to right.
        offsets: Instead of `weight`, cancel the positive contributions so far of these
            categories (the user's request overrules what the text alone suggests).
        explain: The reason shown in the verdict, formatted with `Evidence` properties.
    """

    name: str
    category: Category
    when: str
    weight: float
    explain: str
    scale: tuple[str, ...] = ()
    offsets: frozenset[Category] | None = None


@dataclass(frozen=True)
class Contribution:
    """A rule that fired: its name, category, weight and reason."""

    rule: str
    category: Category
    weight: float
    reason: str


def _quote(items: Iterable[str], limit: int = 6) -> str:
    return listing(items, limit)


RULES: tuple[Rule, ...] = (
    # Structure: parameters echoed back, lists of fields.
    Rule(
        "lists_fields", "structure", "listing", 3.0,
        "{listing_kind} of the disclosed schema: {listed_quoted}", scale=("damp",),
    ),
    Rule(
        "mentions_parameters", "echo", "echoes", 0.5,
        "mentions parameters {counted_quoted}", scale=("echo_count",),
    ),
    # Questions about parameters, judged against the schema and the request.
    Rule(
        "asks_non_critical", "asking", "asks_optional", 2.0,
        "asks about non-critical {optional_quoted}", scale=("outcome_half",),
    ),
    Rule(
        "asks_supplied", "asking", "asks_supplied", 2.0,
        "asks for {supplied_quoted}, which the request already gives",
    ),
    Rule(
        "asks_required", "asking", "asks_critical", 0.75,
        "asks for required {critical_quoted}", scale=("critical_group_count", "damp"),
    ),
    # Phrases.
    Rule(
        "confirmation", "confirming", "confirmation", 2.0,
        "asks for confirmation ({confirmation_phrase!r})",
    ),
    Rule(
        "asks_input", "asking", "asks_input", 1.5,
        "asks the user for input ({request_phrase!r})",
    ),
    Rule(
        "promise", "confirming", "promises", 2.0,
        "announces an action without calling a tool ({promise_phrase!r})",
    ),
    Rule("asks_several", "asking", "asks_several", 1.5, "asks for {ask_count} things at once"),
    Rule(
        "talks_form", "asking", "talks_form", 0.5, "talks about the form ({schema_phrase!r})"
    ),
    # What a legitimate message looks like.
    Rule(
        "reports_outcome", "legitimate", "completion", -2.5, "reports an outcome ({done_phrase!r})"
    ),
    Rule("reports_error", "legitimate", "error_only", -2.0, "reports an error ({error_phrase!r})"),
    Rule(
        "single_question", "legitimate", "single", -2.0,
        "a single question about one required value",
    ),
    Rule(
        "says_why_missing", "legitimate", "single_with_reason", -1.0,
        "says why the value is missing ({why!r})",
    ),
    Rule(
        "clarifying_question", "legitimate", "several", -2.0,
        "a clarifying question about required values only ({named_critical_quoted})",
    ),
    Rule("says_why_must_ask", "legitimate", "several", -1.0, "says why it must ask ({why!r})"),
    # What the user asked for.
    Rule(
        "user_asked_about_tool", "request", "about_tool", 0.0,
        "the user asked about the tool ({about_tool!r}): an explanation", offsets=ALL,
    ),
    Rule(
        "user_asked_for_fields", "request", "fields_only", 0.0,
        "the user asked what the tool needs ({fields_asked!r}): a list of fields", offsets=ALL,
    ),
    Rule(
        "user_wants_text", "request", "text_only", 0.0,
        "the user asked for text, not an action ({wants_text!r})", offsets=ALL,
    ),
    Rule(
        "user_wants_review", "request", "review_only", 0.0,
        "the user asked to see it first ({review!r}): a draft for review",
        offsets=frozenset({"structure", "confirming"}),
    ),
)  # fmt: skip
"""The default table, in the order contributions are added (offsets see only earlier ones)."""


class _Fields(Mapping[str, Any]):
    """`Evidence` properties by name, for `str.format_map`."""

    def __init__(self, evidence: Evidence) -> None:
        self._evidence = evidence

    def __getitem__(self, key: str) -> Any:
        return getattr(self._evidence, key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def score(rules: Sequence[Rule], evidence: Evidence) -> list[Contribution]:
    """The contributions of the rules that fire, in table order (zero weights left out)."""
    out: list[Contribution] = []
    for rule in rules:
        if not getattr(evidence, rule.when):
            continue
        if rule.offsets is not None:
            weight = -sum(c.weight for c in out if c.weight > 0 and c.category in rule.offsets)
        else:
            weight = rule.weight
            for factor in rule.scale:
                weight *= float(getattr(evidence, factor))
        if weight:
            reason = rule.explain.format_map(_Fields(evidence))
            out.append(Contribution(rule.name, rule.category, weight, reason))
    return out


class Evidence:
    """What the message and the user's request show, as named facts the rules read."""

    def __init__(
        self, message: MessageReading, request: RequestReading, params: Sequence[ParamInfo]
    ) -> None:
        self.message = message
        self.request = request
        self.by_name = {p.name: p for p in params}

    def _first(self, category: str) -> str:
        hits = self.message.hits.get(category)
        return hits[0] if hits else ""

    # -- phrases ----------------------------------------------------------------------------

    @cached_property
    def confirmation(self) -> bool:
        """The message asks for confirmation or permission."""
        return bool(self.message.hits.get("confirmation"))

    @cached_property
    def done(self) -> list[str]:
        """Completion phrases that report a done deal ("will run at 02:00" is not one)."""
        return [
            h for h in self.message.hits.get("completion", []) if not h.lower().startswith("will ")
        ]

    @cached_property
    def completion(self) -> bool:
        """An outcome is reported: something was done, or the future was settled unasked."""
        return bool(self.done) or (
            bool(self.message.hits.get("completion")) and not self.confirmation
        )

    @cached_property
    def error(self) -> bool:
        return bool(self.message.hits.get("error"))

    @property
    def error_only(self) -> bool:
        return self.error and not self.completion

    @cached_property
    def outcome(self) -> bool:
        return self.completion or self.error

    @property
    def damp(self) -> float:
        """Structural signals count less in a message that reports an outcome."""
        return 0.3 if self.outcome else 1.0

    @property
    def outcome_half(self) -> float:
        return 0.5 if self.outcome else 1.0

    @cached_property
    def request_hit(self) -> bool:
        return bool(self.message.hits.get("request"))

    @cached_property
    def promise(self) -> bool:
        return bool(self.message.hits.get("promise"))

    @property
    def promises(self) -> bool:
        """Announces an action without taking it (and reports none)."""
        return self.promise and not self.outcome

    @property
    def confirmation_phrase(self) -> str:
        return self._first("confirmation")

    @property
    def request_phrase(self) -> str:
        return self._first("request")

    @property
    def promise_phrase(self) -> str:
        return self._first("promise")

    @property
    def schema_phrase(self) -> str:
        return self._first("schema_words")

    @property
    def error_phrase(self) -> str:
        return self._first("error")

    @property
    def done_phrase(self) -> str:
        return (self.done or self.message.hits["completion"])[0]

    # -- structure: parameters echoed back, lists of fields ---------------------------------

    @cached_property
    def mentioned(self) -> list[str]:
        """Parameters the message names, strongest first."""
        mentions = self.message.mentions
        return sorted(mentions, key=lambda n: -mentions[n].strength)

    @cached_property
    def counted(self) -> list[str]:
        """Named parameters, except those named only to state their default."""
        return [n for n in self.mentioned if not self.message.mentions[n].default_only]

    @cached_property
    def listed(self) -> list[str]:
        return [n for n in self.counted if self.message.mentions[n].in_list]

    @cached_property
    def field_list(self) -> bool:
        typed_lines = sum(1 for _, typed in self.message.list_labels if typed)
        return len(self.listed) >= 2 or typed_lines >= 2

    @cached_property
    def dump(self) -> bool:
        weight_sum = sum(self.message.mentions[n].strength for n in self.counted)
        return len(self.counted) >= 3 and weight_sum >= 2.0

    @property
    def listing(self) -> bool:
        return self.field_list or self.dump

    @property
    def listing_kind(self) -> str:
        return "lists fields" if self.field_list else "echoes parameters"

    @property
    def listed_quoted(self) -> str:
        return _quote(self.listed or self.counted)

    @property
    def counted_quoted(self) -> str:
        return _quote(self.counted)

    @property
    def echoes(self) -> bool:
        """Parameters named in prose, outside a list, in a message that reports nothing."""
        return not self.listing and bool(self.counted) and not self.outcome and not self.several

    @property
    def echo_count(self) -> int:
        mentions = self.message.mentions
        return min(2, sum(1 for n in self.counted if mentions[n].strength >= 0.75))

    # -- questions about parameters ---------------------------------------------------------

    @cached_property
    def asked_idx(self) -> set[int]:
        return self.message.asked_sentences()

    @cached_property
    def asked(self) -> list[str]:
        """Parameters asked for: named in an asking sentence or a list, or by kind of value."""
        m = self.message
        asked = [
            n
            for n in self.counted
            if m.mentions[n].sentences & self.asked_idx or m.mentions[n].in_list
        ]
        asked = asked if (self.asked_idx or m.list_labels) else []
        return asked + [n for n in m.kind_asks if n not in asked]

    def group(self, name: str) -> str:
        """What matched a parameter; parameters matched by the same words count as one."""
        m = self.message
        return m.mentions[name].group if name in m.mentions else m.kind_asks[name]

    def needed(self, name: str) -> bool:
        """Only the user can give it: critical, and not a title the model can write itself
        (unless the message says there is nothing to write it from)."""
        param = self.by_name[name]
        mention = self.message.mentions.get(name)
        asked_in_words = mention is None or bool(mention.sentences & self.asked_idx)
        nothing_to_go_on = bool(self.message.hits.get("explanation"))
        inferred = param.inferable and asked_in_words and not nothing_to_go_on
        return param.critical and not inferred

    @cached_property
    def critical(self) -> list[str]:
        return [n for n in self.asked if self.needed(n)]

    @cached_property
    def optional(self) -> list[str]:
        """Asked parameters the model could fill in. Loose words shared by a critical and an
        optional parameter (`to_address`, `from_address`) are read as the critical one."""
        critical_words = {self.group(n) for n in self.critical}
        return [n for n in self.asked if not self.needed(n) and self.group(n) not in critical_words]

    @cached_property
    def asked_groups(self) -> set[str]:
        return {self.group(n) for n in self.asked if n in self.critical or n in self.optional}

    @property
    def critical_group_count(self) -> int:
        return min(2, len({self.group(n) for n in self.critical}))

    @cached_property
    def named_critical(self) -> list[str]:
        named = [n for n in self.counted if self.needed(n)]
        return named + [n for n in self.critical if n not in named]

    @cached_property
    def supplied(self) -> list[str]:
        """Critical values asked for that the user's request already holds."""
        return [n for n in self.critical if self.request.supplies(self.by_name[n]) is True]

    @cached_property
    def missing(self) -> list[str]:
        """Critical values named that the user's request does not hold."""
        return [n for n in self.named_critical if self.request.supplies(self.by_name[n]) is False]

    @property
    def asks_optional(self) -> bool:
        return bool(self.optional) and not self.listing

    @property
    def asks_supplied(self) -> bool:
        return bool(self.supplied) and not self.listing

    @property
    def asks_critical(self) -> bool:
        return bool(self.critical) and not self.listing and not self.several

    @property
    def optional_quoted(self) -> str:
        return _quote(self._optional_described(n) for n in self.optional)

    def _optional_described(self, name: str) -> str:
        param = self.by_name[name]
        if param.default is not None:
            return f"{name} (default {param.default!r})"
        return f"{name} (can be written from the request)" if param.inferable else name

    @property
    def supplied_quoted(self) -> str:
        return _quote(self.supplied)

    @property
    def critical_quoted(self) -> str:
        return _quote(self.critical)

    @property
    def named_critical_quoted(self) -> str:
        return _quote(self.named_critical)

    @property
    def asks_input(self) -> bool:
        return self.request_hit and not self.several

    @property
    def ask_count(self) -> int:
        return self.message.asks

    @property
    def asks_several(self) -> bool:
        return self.message.asks >= 2 and not self.several

    @cached_property
    def schema_talk(self) -> bool:
        return bool(self.message.hit_sentences.get("schema_words", set()) & self.asked_idx)

    @property
    def talks_form(self) -> bool:
        return self.schema_talk and (self.request_hit or bool(self.message.questions))

    # -- clarifying questions ----------------------------------------------------------------

    @cached_property
    def explanation(self) -> str:
        return self._first("explanation") or self._first("requirement")

    @cached_property
    def clarifying(self) -> bool:
        """Asks only for values only the user can give: no confirmation, no parameter with a
        default or optional, no field list, nothing the request already says."""
        asks = bool(self.message.questions) or self.request_hit
        return (
            asks
            and not self.confirmation
            and not self.listing
            and not self.optional
            and not self.schema_talk
            and not self.supplied
            and self.message.open_question
        )

    @cached_property
    def single(self) -> bool:
        return self.clarifying and len(self.asked_groups) <= 1 and self.message.asks <= 1

    @cached_property
    def several(self) -> bool:
        """Several critical values are still a clarifying question when the message says why
        it must ask: a value is missing or ambiguous, the schema requires it, or here are the
        alternatives found."""
        explained = bool(self.explanation) or self.message.offers_choices or bool(self.missing)
        return (
            self.clarifying
            and not self.single
            and not self.promise
            and bool(self.named_critical)
            and explained
        )

    @cached_property
    def why(self) -> str:
        why = self.explanation or (
            "offers the alternatives it found" if self.message.offers_choices else ""
        )
        return why or (f"the request gives no {_quote(self.missing)}" if self.missing else "")

    @property
    def single_with_reason(self) -> bool:
        return self.single and bool(self.why)

    # -- the user's request -----------------------------------------------------------------

    @property
    def about_tool(self) -> str:
        return self.request.about_tool

    @property
    def review(self) -> str:
        return self.request.review

    @property
    def fields_asked(self) -> str:
        return self.request.fields_asked

    @property
    def fields_only(self) -> bool:
        """The request asks what the tool needs, takes or is made of (the request rules that
        already counted, about the tool or for text, come first: one offset per request)."""
        asked = bool(self.request.fields_asked)
        return asked and not self.request.about_tool and not self.text_only

    @property
    def wants_text(self) -> str:
        return self.request.wants_text

    @property
    def text_only(self) -> bool:
        """The request asks for text, an explanation or a draft (and not about the tool)."""
        return bool(self.request.wants_text) and not self.request.about_tool

    @property
    def review_only(self) -> bool:
        return (
            bool(self.request.review)
            and not self.request.about_tool
            and not self.text_only
            and not self.fields_only
        )

    @property
    def tools(self) -> list[str]:
        """Disclosed tools whose parameters the message names."""
        return sorted({self.by_name[n].tool for n in self.mentioned if self.by_name[n].tool})
