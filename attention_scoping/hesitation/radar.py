"""Hesitation radar: is a model message without a tool call a stall after a schema was shown?

The failure it catches: right after a model is shown a rich tool schema (by a gateway's
`get_tool_schema` or because the tool was promoted into the call), it stops calling tools and
writes the schema back to the user ("you need to provide the following details: title, message,
schedule_time... would you like to proceed?"). The radar is a pure function of the message text
and the schemas disclosed so far; no LangChain (pass provider-style dicts), no model call.

How it decides (a score, threshold 2.0; every contribution is listed in `reasons`):

- Structure counts most. Parameter names of a disclosed schema echoed back (`schedule_time`,
  "schedule time", a `- title:` list line), three or more of them, or a list of fields → +3.
  A parameter named only to state its default ("access will default to viewer") is not echoed.
- The schema says which values only the user can give: *critical* ones are required and have
  no default. A question about a parameter that has a default, is optional, or is a title the
  model can write itself → +2; about a critical one → +0.75 each. Parameters are found by name
  or by the kind of value a question asks for ("how many people?" → the integer parameter).
- Phrases: asking for confirmation or permission (+2), asking for input ("please provide", "I
  need the following details", +1.5), announcing an action without taking it ("I'll schedule
  it now", +2), asking for several things at once (+1.5), talking about the form (+0.5).
- What a legitimate message looks like lowers the score: a reported outcome (something was
  created, a status line such as "Deployment complete", here are the results, −2.5) or an error
  (−2, "nothing was applied" included) damps the structural signals. A clarifying question
  asks only for critical values, with no confirmation and no field list: −2 for a single
  question, −1 more when it says why; several critical values count only when the message says
  why it must ask (nothing to go on, the schema requires them, or the alternatives it found),
  and then the asking signals are not counted.
- The user's request, when the caller passes it (`request=`): a question about the tool makes
  the message an explanation (no stall), and so does a request for text rather than the action
  (wording, a draft, a translation, an explanation, docs, a comparison, or "I'll send it
  myself"); a request to review first makes a shown draft or plan
  and its closing confirmation legitimate; and a question about a critical value is a stall
  when the request already holds a value of that kind (a number, a date, a time, an email, an
  enum member, a path...), and a real question when it holds none.

Cost: linear in the text, and bounded: the radar reads at most `MESSAGE_WINDOW` characters of a
message (its head and its tail) and `REQUEST_WINDOW` of the request, so a 256 KB reply of a model
looping to its output cap costs what an 8 KB one does.

Each signal is a named `Rule` in a table (`rules.RULES`: predicate, weight, category,
explanation) and a small scorer sums those that fire; the facts they read come from `reading`
(the message and the request) and `schemas` (the disclosed tools). Markers are regular
expressions grouped in `HesitationMarkers` (`markers`); English by default, extend them for
other languages. Structural signals are language-independent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from attention_scoping.hesitation.markers import (
    DEFAULT_MARKERS,
    HesitationMarkers,
    category_enabled,
)
from attention_scoping.hesitation.reading import MessageReading, RequestReading
from attention_scoping.hesitation.rules import RULES, Evidence, Rule, score
from attention_scoping.hesitation.schemas import ParamInfo, SchemaInfo, parse_schemas

__all__ = [
    "DEFAULT_MARKERS",
    "DEFAULT_THRESHOLD",
    "MESSAGE_WINDOW",
    "REQUEST_WINDOW",
    "RULES",
    "Hesitation",
    "HesitationMarkers",
    "ParamInfo",
    "Rule",
    "SchemaInfo",
    "category_enabled",
    "detect_hesitation",
    "parse_schemas",
    "text_window",
]

DEFAULT_THRESHOLD = 2.0
"""Score at or above which a message is a stall."""

MESSAGE_WINDOW = (6_000, 2_000)
"""(head, tail): the characters of a message the radar reads. A stall is short (the longest in
the test corpora is under 500 characters); a longer reply is read at its start, where a report
or a field list begins, and at its end, where the closing question sits."""

REQUEST_WINDOW = (4_000, 1_000)
"""(head, tail): the characters of the user's request the radar reads."""

WINDOW_GAP = "\n…\n"
"""What stands for the middle a window leaves out (a line of its own: no sentence spans it)."""


def text_window(text: str, window: tuple[int, int]) -> str:
    """`text` when it fits `window` (head, tail), else its head and tail around `WINDOW_GAP`."""
    head, tail = window
    if len(text) <= head + tail:
        return text
    return text[:head] + WINDOW_GAP + (text[-tail:] if tail else "")


@dataclass(frozen=True)
class Hesitation:
    """The radar's verdict on one message: truthy when it is a stall.

    Attributes:
        stalled: Whether the message is a stall.
        score: The summed evidence (a stall at `threshold` or above).
        reasons: One line per signal that contributed, with its weight, for logs and events.
        params: Parameters of the disclosed schemas that the message mentions.
        tools: Disclosed tools whose parameters the message mentions.
        threshold: The threshold it was judged against.
        signals: Names of the rules that fired.
    """

    stalled: bool
    score: float
    reasons: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    threshold: float = DEFAULT_THRESHOLD
    signals: tuple[str, ...] = ()
    """Names of the rules that fired (see `rules.RULES`), in table order."""

    def __bool__(self) -> bool:
        """Truthy for a stall."""
        return self.stalled

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for think events and logs)."""
        return {
            "stalled": self.stalled,
            "score": round(self.score, 2),
            "reasons": list(self.reasons),
            "params": list(self.params),
            "signals": list(self.signals),
        }


def detect_hesitation(
    text: str | None,
    schemas: Iterable[Any] = (),
    *,
    request: str | None = None,
    markers: HesitationMarkers = DEFAULT_MARKERS,
    threshold: float = DEFAULT_THRESHOLD,
    rules: Sequence[Rule] = RULES,
) -> Hesitation:
    """Decide whether `text`, a model message with no tool call, is a stall.

    Args:
        text: The message text (read within `MESSAGE_WINDOW`).
        schemas: The tool schemas disclosed so far: `{"name", "parameters"}` dicts (optionally
            with `defaults`) or OpenAI- or Anthropic-style tool dicts (see `parse_schemas`;
            convert a LangChain tool with `adapters.tools.to_provider_schema` first).
        request: The user's message the model answered, if known. It lets the radar tell a
            tool explanation the user asked for, a draft the user wanted to review first, and
            a question about a value the request holds (or lacks) from their look-alikes.
            Without it the radar judges the text and the schemas alone.
        markers: Phrase markers per category (`DEFAULT_MARKERS`: English).
        threshold: Score at or above which the message is a stall.
        rules: The signal table (`rules.RULES`), to reweigh or drop a signal.

    Returns:
        A `Hesitation`: truthy for a stall, with the score and the reasons.

    Example:
        ```python
        schema = {"name": "scheduled_jobs", "parameters": {"type": "object", "properties": {
            "title": {"type": "string"}, "schedule_time": {"type": "string", "default": "+30m"}},
            "required": ["title"]}}
        verdict = detect_hesitation(
            "Please provide the title and schedule_time. Would you like to proceed?", [schema]
        )
        assert verdict and any("confirmation" in r for r in verdict.reasons)
        ```
    """
    if not text or not text.strip():
        return Hesitation(False, 0.0, threshold=threshold)
    params = [p for s in parse_schemas(schemas) for p in s.params]
    read = text_window(text, MESSAGE_WINDOW)
    asked = text_window(request, REQUEST_WINDOW) if request else request
    evidence = Evidence(
        MessageReading(read, params, markers), RequestReading(asked, markers), params
    )
    contributions = score(rules, evidence)
    total = sum(c.weight for c in contributions)
    ordered = sorted(contributions, key=lambda c: -abs(c.weight))
    return Hesitation(
        stalled=total >= threshold,
        score=total,
        reasons=tuple(f"{c.reason} [{c.weight:+.2f}]" for c in ordered),
        params=tuple(evidence.mentioned),
        tools=tuple(evidence.tools),
        threshold=threshold,
        signals=tuple(c.rule for c in contributions),
    )
