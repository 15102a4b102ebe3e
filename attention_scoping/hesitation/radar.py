"""Hesitation radar: is a model message without a tool call a stall after a schema was shown?

The failure it catches: right after a model is shown a rich tool schema (by a gateway's
`get_tool_schema` or because the tool was promoted into the call), it stops calling tools and
writes the schema back to the user ("you need to provide the following details: title, message,
schedule_time... would you like to proceed?"). The radar is a pure function of the message text
and the schemas disclosed so far; no LangChain, no model call.

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
  the message an explanation (no stall); a request to review first makes a shown draft or plan
  and its closing confirmation legitimate; and a question about a critical value is a stall
  when the request already holds a value of that kind (a number, a date, a time, an email, an
  enum member, a path...), and a real question when it holds none.

Markers are regular expressions grouped in `HesitationMarkers`; English by default, extend them
for other languages. Structural signals are language-independent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

__all__ = [
    "DEFAULT_MARKERS",
    "DEFAULT_THRESHOLD",
    "Hesitation",
    "HesitationMarkers",
    "ParamInfo",
    "SchemaInfo",
    "detect_hesitation",
    "parse_schemas",
]

DEFAULT_THRESHOLD = 2.0
"""Score at or above which a message is a stall."""

# -- schemas -----------------------------------------------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[\s_\-.]+")

_COMMON_WORDS_TEXT = """
    a all an and any as at be body by content count data date day days do end filter
    filters for force format from id ids if in input inputs is it item items key keys kind
    limit list mode name names new note notes number of old on option options or output
    page path q query size start tag tags text the time to type types up url user users
    value values with
"""
_COMMON_WORDS = frozenset(_COMMON_WORDS_TEXT.split())
"""Single-word parameter names so common in prose that only a field-like mention counts."""


_TITLE_WORDS = frozenset({"title", "subject", "summary", "topic", "headline"})


def _words(name: str) -> tuple[str, ...]:
    return tuple(w for w in _SPLIT.split(_CAMEL.sub(" ", name).lower()) if w)


@dataclass(frozen=True)
class ParamInfo:
    """One parameter of a disclosed schema, as the radar sees it."""

    name: str
    tool: str
    critical: bool
    """Required and without a default: the model cannot fill it in by itself."""
    default: Any = None
    """The schema's default or the gateway's suggested default, if any."""
    kind: str = ""
    """What a value looks like, from the schema: "number", "date", "time", "datetime",
    "email", "phone" or "" (anything). Used to see whether a user's request already holds one."""
    choices: tuple[str, ...] = ()
    """The schema's `enum` values, as strings."""

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The name split into lower-case words (`scheduleTime` -> ("schedule", "time"))."""
        return _words(self.name)

    @cached_property
    def identifier(self) -> bool:
        """Whether the name can only be written as an identifier (has `_`, digits or caps)."""
        return len(self.words) > 1 or any(c.isdigit() for c in self.name)

    @cached_property
    def inferable(self) -> bool:
        """A title-like text (`title`, `subject`, `summary`, `topic`) the model can write itself."""
        return not self.kind and bool(set(self.words) & _TITLE_WORDS)

    @cached_property
    def common(self) -> bool:
        """A one-word name that is a common English word (`name`, `date`, `to`)."""
        return len(self.words) == 1 and self.words[0] in _COMMON_WORDS


@dataclass(frozen=True)
class SchemaInfo:
    """A disclosed tool: its name and parameters."""

    name: str
    params: tuple[ParamInfo, ...]


def _tool_dict(schema: Any) -> Mapping[str, Any]:
    if isinstance(schema, Mapping):
        fn = schema.get("function")
        return fn if isinstance(fn, Mapping) else schema
    # A LangChain tool (or anything `convert_to_openai_tool` accepts), imported lazily so the
    # radar stays usable without LangChain.
    from langchain_core.utils.function_calling import convert_to_openai_tool

    converted = convert_to_openai_tool(schema)
    fn = converted.get("function", converted)
    return fn if isinstance(fn, Mapping) else {}


def _nullable(spec: Mapping[str, Any]) -> bool:
    kinds = spec.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    options = spec.get("anyOf") or spec.get("oneOf") or []
    return any(isinstance(o, Mapping) and o.get("type") == "null" for o in options)


_DATE_HINT = re.compile(r"\byyyy-mm-dd\b|\bdate\b", re.I)
_TIME_HINT = re.compile(r"\bhh:mm\b", re.I)
_DATETIME_HINT = re.compile(r"\biso[ -]?8601\b|\bdate-?time\b|\btimestamp\b", re.I)


def _kind(name: str, spec: Mapping[str, Any]) -> str:
    """What a value of this parameter looks like (see `ParamInfo.kind`)."""
    words = set(_words(name))
    items = spec.get("items")
    fmt = str(spec.get("format") or (items.get("format") if isinstance(items, Mapping) else ""))
    kinds = spec.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    description = str(spec.get("description") or "")
    if kinds & {"boolean", "object"}:
        return ""
    if fmt == "email" or "email" in words:
        return "email"
    if "phone" in words or re.search(r"\bphone\b|\be\.?164\b", description, re.I):
        return "phone"
    if kinds & {"integer", "number"}:
        return "number"
    if fmt == "date-time" or _DATETIME_HINT.search(description):
        return "datetime"
    if fmt == "date" or "date" in words or _DATE_HINT.search(description):
        return "date"
    if fmt == "time" or "time" in words or _TIME_HINT.search(description):
        return "time"
    if fmt in ("uri", "url") or words & {"url", "uri", "link", "webhook"}:
        return "url"
    if words & {"path", "file", "filename", "dir", "directory"}:
        return "path"
    if "channel" in words:
        return "channel"
    if words & {"repo", "repository"}:
        return "repo"
    if words & {"id", "ids"}:
        return "id"
    if words & {"text", "body", "message", "content", "description", "query", "command"}:
        return "text"
    return ""


def _params(
    tool: str, schema: Mapping[str, Any], hints: Mapping[str, Any], depth: int = 0
) -> list[ParamInfo]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    required = set(schema.get("required") or ())
    out: list[ParamInfo] = []
    for pname, raw in props.items():
        spec = raw if isinstance(raw, Mapping) else {}
        has_default = "default" in spec or pname in hints
        default = hints.get(pname, spec.get("default"))
        critical = pname in required and not has_default and not _nullable(spec)
        enum = spec.get("enum")
        choices = tuple(str(v) for v in enum) if isinstance(enum, list) else ()
        out.append(ParamInfo(str(pname), tool, critical, default, _kind(str(pname), spec), choices))
        if depth == 0 and spec.get("type") == "object":
            out.extend(_params(tool, spec, {}, depth + 1))
    return out


def parse_schemas(schemas: Iterable[Any]) -> list[SchemaInfo]:
    """Normalize disclosed schemas of any common shape.

    Accepted per item: `{"name", "parameters"}` (plus an optional `defaults` mapping of
    suggested defaults, as `get_tool_schema` payloads carry), an OpenAI-style tool dict
    (`{"type": "function", "function": {...}}`), an Anthropic-style `{"name", "input_schema"}`,
    a bare JSON schema with `properties`, or a LangChain tool.
    """
    out: list[SchemaInfo] = []
    for item in schemas:
        if isinstance(item, SchemaInfo):
            out.append(item)
            continue
        fn = _tool_dict(item)
        name = str(fn.get("name", ""))
        params = fn.get("parameters") or fn.get("input_schema")
        if params is None and "properties" in fn:
            params = fn
        hints = fn.get("defaults")
        if not isinstance(params, Mapping):
            out.append(SchemaInfo(name, ()))
            continue
        out.append(
            SchemaInfo(
                name, tuple(_params(name, params, hints if isinstance(hints, Mapping) else {}))
            )
        )
    return out


# -- markers -----------------------------------------------------------------------------------

_DONE_VERBS = (
    r"scheduled|created|sent|added|saved|updated|deleted|removed|booked|cancell?ed|posted|"
    r"published|deployed|merged|opened|closed|filed|submitted|transferred|refunded|paid|"
    r"uploaded|renamed|moved|archived|assigned|invited|registered|enabled|disabled|set up|"
    r"configured|completed|finished|queued|applied|reverted|rolled back|restarted|started|"
    r"stopped|triggered|launched|generated|exported|imported|converted|calculated|computed|"
    r"executed|ran|issued|charged|reset|logged|recorded|tagged|notified|emailed|forwarded|"
    r"replied|translated|reserved|approved|granted|revoked|blocked|unblocked|installed|"
    r"restored|shared|backed up|renewed|scaled|rebooted|paused|resumed|flagged|labell?ed|"
    r"muted|unsubscribed|subscribed|synced|rescheduled|declined|accepted|ordered|placed|"
    r"drafted and sent|fixed|created and|looked up|checked and"
)


@dataclass(frozen=True)
class HesitationMarkers:
    """Phrase markers of the radar, as case-insensitive regular expressions per category.

    Plain phrases work as they are (escape `?`, `.`, `(` if you mean them literally). Extend
    the English defaults for other languages:

    Example:
        ```python
        from attention_scoping import detect_hesitation
        from attention_scoping.hesitation.radar import DEFAULT_MARKERS

        fr = DEFAULT_MARKERS.extend(
            confirmation=[r"voulez-vous que je", r"dois-je continuer"],
            request=[r"veuillez (fournir|préciser|indiquer)"],
        )
        detect_hesitation(text, schemas, markers=fr)
        ```
    """

    confirmation: tuple[str, ...] = ()
    """Asking the user for permission or confirmation to act."""
    request: tuple[str, ...] = ()
    """Asking the user for input values."""
    promise: tuple[str, ...] = ()
    """Announcing an action without taking it ("I'll schedule it now")."""
    completion: tuple[str, ...] = ()
    """Reporting an outcome: something was done, or here are the results."""
    error: tuple[str, ...] = ()
    """Reporting a failure."""
    explanation: tuple[str, ...] = ()
    """Saying why a value is missing or ambiguous (makes a question a real clarification)."""
    requirement: tuple[str, ...] = ()
    """Saying that the schema requires a value without a default ("both are required")."""
    pleasantry: tuple[str, ...] = ()
    """Courtesy phrases removed before matching ("let me know if you need anything else")."""
    schema_words: tuple[str, ...] = ()
    """Words about schemas and forms ("parameters", "the following details")."""
    tool_question: tuple[str, ...] = ()
    """In the user's request: asking about a tool rather than for an action."""
    review_first: tuple[str, ...] = ()
    """In the user's request: asking to see a draft or plan before anything runs."""

    def extend(self, **extra: Iterable[str]) -> HesitationMarkers:
        """A copy with `extra` patterns appended to the named categories."""
        changes: dict[str, tuple[str, ...]] = {}
        for category, patterns in extra.items():
            if category not in self.__dataclass_fields__:
                valid = ", ".join(self.__dataclass_fields__)
                msg = f"unknown marker category {category!r}; valid: {valid}"
                raise ValueError(msg)
            if isinstance(patterns, str):
                msg = f"{category}: pass a list of patterns, not the string {patterns!r}"
                raise TypeError(msg)
            changes[category] = (*getattr(self, category), *patterns)
        return replace(self, **changes)

    @cached_property
    def compiled(self) -> dict[str, re.Pattern[str] | None]:
        """One compiled alternation per category (None when a category is empty)."""
        out: dict[str, re.Pattern[str] | None] = {}
        for category in self.__dataclass_fields__:
            patterns = getattr(self, category)
            for p in patterns:
                re.compile(p)  # fail with the offending pattern, not the alternation
            out[category] = (
                re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
                if patterns
                else None
            )
        return out


DEFAULT_MARKERS = HesitationMarkers(
    confirmation=(
        r"\bwould you like (?:me )?to\b",
        r"\bdo you want (?:me )?to\b",
        r"\b(?:is|does) (?:that|this|it|everything) (?:ok|okay|alright|all right|fine|correct|"
        r"right|look (?:good|right|ok|okay|correct)|sound (?:good|right|ok|okay)|work for you)\b",
        r"\b(?:please|kindly|just|can you|could you|would you) (?:double[- ]check and )?"
        r"confirm\b",
        r"\bconfirm (?:if|whether|that you|you(?:'d| would))\b",
        r"\b(?:just )?to confirm\b",
        r"\b(?:once|if|after|when) you(?:'ve)? (?:confirm|approve|give me the go-ahead|say)\b",
        r"\b(?:your|an explicit) (?:confirmation|approval|permission|go-ahead|consent|ok)\b",
        r"\b(?:proceed|continue|go ahead)\s*\?",
        r"\bready (?:for me )?to (?:proceed|go|submit|send|schedule|create|run|book)\b",
        r"\bif you(?:'d| would)? (?:like|want)(?: me)? to (?:proceed|continue|go ahead)\b",
        r"\blet me know (?:if|whether|when) (?:you(?:'d| would)? (?:like|want) me to|"
        r"i should|(?:that|this)(?:'s| is) (?:ok|okay|fine|correct)|you(?:'re| are) ready|"
        r"to (?:proceed|go ahead))",
        r"\bbefore (?:i|we) (?!can\b|forget\b)[a-z]{2,}\b",
        r"\b(?:yes|no)\s*/\s*(?:no|yes)\b|\(y/n\)",
        r"\bgo ahead (?:and )?(?:\w+ )?\?|\bgo ahead with (?:it|this|that)\s*\?",
        r"\bsay (?:yes|the word|go)\b",
        r"\b(?:ok|okay|alright|fine) (?:for me )?to (?:submit|send|proceed|go ahead|create|post|"
        r"run|book|schedule|place|deploy|apply|delete)\b",
        r"\bwant me to\b",
        r"\b(?:approve|confirm)\s*\?",
        r"\b(?:correct|right|ok|okay|sounds? good|looks? good|good to go|agreed|all good|"
        r"yes or no)\s*\?",
        r"\b(?:just )?to (?:double[- ]check|be (?:sure|safe)|make sure)\b",
        r"\bare you sure\b",
        r"\bgo-ahead\b|\bgreen light\b|\bsign[- ]off\b",
        r"\b(?:is|was) (?:that|this) what you (?:want|wanted|meant|mean|had in mind)\b",
        r"\b(?:does|would) (?:that|this) work\b",
    ),
    request=(
        r"\bplease (?:provide|specify|share|supply|send|give|tell|enter|fill|list|clarify|"
        r"let me know|add|include|choose|pick|select|indicate)\b",
        r"\b(?:could|can|would|will) you (?:please |kindly )?(?:provide|specify|share|supply|"
        r"give|tell|send|fill|clarify|let me know|choose|pick|select|indicate|list)\b",
        r"\b(?:you(?:'ll| will)? (?:need|have) to|you must|you should|you(?:'d| would) need to)"
        r" (?:provide|specify|give|supply|fill|enter|tell|choose|pick|select|include)\b",
        r"\b(?:i|we)(?:'ll| will| would|'d)? (?:need|require|still need|just need)"
        r" (?:the|a|an|some|few|a few|more|these|those|following|your|you to|additional|"
        r"to know|at least|all|several|each|both|values?|details?|information|info)\b",
        r"\b(?:the )?following (?:details|information|info|parameters|fields|values|inputs|"
        r"arguments|settings|options|items|things|pieces)\b",
        r"\b(?:required|missing|necessary|needed|remaining|mandatory) (?:parameters|fields|"
        r"arguments|details|information|info|inputs|values|settings)\b",
        r"\bwhat (?:values?|details|settings|options|parameters) (?:would|should|do|shall|"
        r"to)\b",
        r"\bwhat would you like (?:the|it|me|to|for)\b",
        r"\blet me know (?:the|which|what|your|how|when|where|who)\b",
        r"\b(?:unable|not able|can't|cannot|can not) (?:to )?(?:proceed|continue|go ahead|"
        r"complete this|do this)\b(?: \w+)? (?:without|until|unless)\b",
        r"\b(?:once|as soon as|when|after) you (?:provide|give|share|send|let me know|tell me|"
        r"fill|specify|supply)\b",
        r"\bif you (?:can |could )?(?:provide|give me|share|send me|tell me|specify|supply)\b",
        r"\bfill (?:in|out) (?:the|these|this|those|a|your)\b",
        r"\bprovide (?:me with|the necessary|the required|values|these|those|all)\b",
        r"\b(?:any|some) (?:preferences?|specific (?:values|details|settings))\b",
        r"\bhow would you like\b",
        r"\bbefore (?:i |we )?(?:can )?[a-z]{3,}ing (?:the|this|it|that|your|a|an|anything)\b",
        r"\b(?:just |simply )?(?:tell|give|send) me (?!a moment|a sec)\b",
        r"\bwhich (?:values?|settings|options|details) (?:would|should|do)\b",
    ),
    promise=(
        r"\b(?:i(?:'ll| will| am going to|'m going to| am about to|'m about to)|let me)"
        r" (?:now |go ahead and |just |quickly |then |also |first |right away )*"
        r"(?!know\b|need\b|be\b|have\b|wait\b|let you\b|remember\b|explain\b|summari[sz]e\b|"
        r"clarify\b|keep\b|note\b|make sure\b|try to\b|only\b|not\b|never\b)[a-z]{3,}\b",
        r"\b(?:proceeding|going ahead) (?:to|with|now)\b",
        r"(?:^|[.!?]\s+|\n\s*)[a-z]+ing\b(?:[^.!?\n]|\.(?=\S))*\b(?:now|right away|"
        r"immediately)\b",
        r"\bnow (?:scheduling|creating|sending|booking|executing|running|calling|submitting|"
        r"posting|deploying|adding|setting up)\b",
        r"\b(?:i(?:'m| am)) (?:now )?(?:scheduling|creating|sending|booking|executing|running|"
        r"calling|submitting|posting|deploying|adding|setting up)\b",
    ),
    completion=(
        rf"\b(?:i|we)(?:'ve| have| had)? (?:successfully |just |now |already |also )?"
        rf"(?:{_DONE_VERBS})\b",
        r"\b(?:has|have|had) (?:now |also |just )?been (?:successfully |now )?(?:\w+ed|sent|"
        r"set|done|run|made|built|taken|written|paid|put|shut|held|given|kept|bound|split|"
        r"set up|torn down|spun up)\b",
        rf"\b(?:is|are|was|were) (?:now |successfully |all |already )?(?:{_DONE_VERBS}|set|"
        r"done|complete|live|confirmed|in place|on its way|under way|underway|up and running)"
        r"\b",
        r"\bsuccessfully\b",
        # "Reminder scheduled for 09:00", "Created the event:" (no subject, no question).
        rf"(?:^|[.!?]\s+|\n\s*)(?:(?!(?:i|we|you|should|will|would|can|could|must|to|be|"
        rf"needs?|what|which|when|who|how|shall)\b)[\w#\"'“”-]+ ){{0,3}}(?:{_DONE_VERBS})\b"
        # ...up to the end of its own sentence without a question mark.
        rf"(?=(?:[^?.!\n]|\.(?=\S))*(?:[.!]|\n|$))",
        r"^\s*(?:done|all set|all done|finished|complete|completed|success)\b",
        # A status line: "Deployment complete", "Dry run passed", "Backup succeeded".
        r"(?:^|[.!?]\s+|\n\s*)(?:(?!(?:please|to|will|can|should|must|would|could|is|are|"
        r"does|do)\b)[\w#\"'“”/.-]+ ){1,3}(?:complete|completed|passed|succeeded|finished|"
        r"successful)\b(?=[^?\n]*(?:\n|$))",
        r"\b(?:you(?:'re| are) )?all set\b",
        r"\bhere(?:'s| is| are) (?:your|the results?|the answer|what i found|a summary|the "
        r"(?:current|latest|forecast|list|summary|breakdown|report|total|balance|status))\b",
        r"\bi found\b(?! (?:the|a|an) (?:\w+ )?(?:tool|schema|function|endpoint|api))",
        r"(?<!\bif )(?<!\bwhether )\b(?:found|returned|matched|there (?:is|are|were|was)) "
        r"(?:\d+|no|only|one|two|three|several|exactly)\b",
        r"\b(?:the )?(?:result|answer|total|sum|balance|forecast|temperature|average|median|"
        r"status|current (?:\w+ )?(?:price|rate|value))s? (?:is|are|was|were|comes? to|shows?)"
        r"\b",
        r"\b(?:job|booking|reservation|confirmation|reference|tracking|order|transaction|"
        r"receipt|run|build) (?:id|number|#|no\.?|reference)[:\s#]*[a-z0-9][\w-]*\d",
        r"\bwill (?:fire|run|go out|be sent|notify you|remind you|trigger|start|arrive|expire)\b",
        r"\bit(?:'s| is) (?:currently|now) \w+",
        r"\b(?:it(?:'s| is)|that(?:'s| is)) done\b",
    ),
    error=(
        r"\b(?:failed|errored|rejected|denied|forbidden|unauthori[sz]ed|timed out|"
        r"unavailable|unreachable|not found|doesn't exist|does not exist|no such|"
        r"rate[- ]limited|traceback|outage|could not be|couldn't be)\b",
        r"\ban? (?:\w+ )?error\b|\berror(?:s)? (?:says|said|message|code|was|is|:)",
        r"\b(?:couldn't|could not|wasn't able to|was unable to|were unable to|weren't able to|"
        r"didn't|did not|won't|will not) (?:\w+ ){0,2}(?:complete|create|schedule|send|find|"
        r"reach|connect|run|execute|process|save|update|delete|book|load|fetch|retrieve|access|"
        r"go through|work|succeed|accept|authenticate|validate|parse)\b",
        r"\b(?:returned|responded with|came back with|gave|threw|raised) (?:an? |the )?"
        r"(?:\w+ )?(?:error|status|code|exception)\b",
        r"\b(?:http|status|code)\s*(?:code\s*)?[45]\d\d\b",
        r"\bwent wrong\b|\bis down\b|\bis not responding\b|\bis invalid\b|\bnot (?:a )?valid\b",
        r"\bnothing (?:was|has been|got|is) (?:\w+ed|sent|run|done|made|spent|set|written|"
        r"taken)\b(?! yet\b)",
    ),
    explanation=(
        r"\b(?:couldn't|could not|can't|cannot|didn't|did not|don't|do not) (?:find|see|locate|"
        r"determine|tell|know|infer|work out|identify|match)\b",
        r"\bthere (?:are|were) (?:two|three|four|several|multiple|many|\d+)\b",
        r"\b(?:not sure|unsure|unclear|uncertain|ambiguous)\b",
        r"\b(?:you )?(?:didn't|did not|haven't|have not) (?:say|mention|specify|tell|give|"
        r"provide|include|indicate)\b",
        r"\b(?:no|none|nothing) (?:\w+ ){0,2}(?:on file|found|matching|matches|saved|"
        r"configured|listed|stored|linked|recorded|provided|specified|given|available|set)\b",
        r"\bmatch(?:es|ing)? (?:both|two|several|multiple|more than one)\b",
        r"\bwhich one\b|\bdo you mean\b|\bdid you mean\b|\bmore than one\b",
        r"\b(?:isn't|is not|wasn't|was not|aren't|are not) (?:in|on|part of|mentioned|"
        r"specified|given|included|clear)\b",
        r"\bi (?:only )?(?:have|see|know) (?:no|two|several|both)\b",
        r"\b(?:depends on|only you (?:can|know))\b",
        r"\b(?:i|we) (?:don't|do not|didn't|did not) (?:have|know)\b",
        r"\b(?:don't|do not|rather not|won't|will not|shouldn't) (?:want to )?guess\b",
        r"\b(?:has|have|had|gives?|gave|says?|said|mentions?) (?:neither|none|nothing|no)\b",
        r"\b(?:doesn't|does not|didn't|did not) (?:say|mention|specify|include|give|have)\b",
        r"\bboth (?!(?:are|is) (?:required|needed|mandatory))(?:\w+ ){0,2}(?:are|have|exist|"
        r"look|match|work)\b",
    ),
    requirement=(
        r"\b(?:no|without an?|neither has an?|none has an?|has no|have no) default\b",
        r"\b(?:is|are) (?:both |all |also )?(?:required|mandatory)\b",
        r"\b(?:the|this|that|your|each|every) (?:\w+ ){1,2}(?:needs|requires)\b",
    ),
    pleasantry=(
        r"\blet me know if (?:you )?(?:need|want|have|would like|'d like)(?: me to)? "
        r"(?:anything|any|more|other|further|something|another|help|changes|to change|to "
        r"adjust|to make)\b[^.!?\n]*[.!?]?",
        r"\b(?:is there )?anything else[^.!?\n]*[.!?]?",
        r"\b(?:happy|glad) to help\b[^.!?\n]*[.!?]?",
        r"\bhope (?:this|that) helps\b[^.!?\n]*[.!?]?",
        r"\bfeel free to\b[^.!?\n]*[.!?]?",
        r"\bwould you like (?:me to )?(?:do )?anything else\b[^.!?\n]*[.!?]?",
        # A follow-up offer for something more is not a request to confirm the task at hand.
        r"(?:^|(?<=[.!?])\s+|(?<=\n))(?:would you like|do you want|want|shall i|should i|can i)"
        r"(?: me)?(?: to)? [^.!?\n,;]*\b(?:also|as well|too|another|additional|more|other|"
        r"further|the rest)\b[^.!?\n,;]*\?",
        # Overriding a stated default is an offer, not a question.
        r"\bunless you (?:tell me|say|want|would like|'d like|prefer|'d prefer|would prefer|"
        r"specify|ask)\b[^.!?\n]*",
    ),
    schema_words=(
        r"\b(?:parameters?|fields?|arguments?|args|inputs?|details|information|info|settings|"
        r"options|values|schema|properties|form)\b",
        r"\b(?:required|optional|mandatory)\b",
        r"\b(?:a (?:bit|little) )?more (?:about|details|information|info|context)\b",
    ),
    tool_question=(
        r"\b(?:what|which) (?:parameters|fields|arguments|inputs|options|settings|values) "
        r"(?:does|do|will|would|can|should) (?:it|they|the|this|that|you|i|\w+_\w+)\b",
        r"\b(?:what|which) (?:parameters|fields|arguments|inputs) (?:are|is|exist)\b",
        r"\bhow (?:do|can|should|would) (?:i|you|we) (?:use|call)\b",
        r"\b(?:what(?:'s| is)|show me|explain|describe) (?:the |its |this |that )?(?:\w+ ){0,2}"
        r"schema\b",
        r"\bwhat (?:does|do|would) (?:\S+ ){1,4}(?:need|take|require|accept|expect)\b",
        r"\b(?:what|which) (?:info|information|details) (?:does|do|would)\b",
        r"\b(?:an? |the )?(?:example|sample|template) (?:payload|request|call|json|input|"
        r"arguments|body)\b",
        r"\bwhat (?:is|are) (?:required|needed|optional|the defaults?)\b",
        r"\b(?:explain|describe|walk me through|list|tell me about) (?:the |its |all |each )?"
        r"(?:\w+ ){0,3}(?:parameters|fields|arguments|options|inputs|settings|schema|payload|"
        r"format)\b",
        r"\bwhat (?:can|could|should|do) (?:i|we) (?:pass|send|give|provide|set|include|put)\b",
        r"\bwhat(?:'s| is) the (?:format|payload|json|syntax|input)\b",
        r"\b(?:show|give) me an? (?:example|sample|template)\b",
        r"\bwhat does (?:\S+ ){1,3}do\b|\bhow does (?:\S+ ){1,3}work\b",
    ),
    review_first=(
        r"\b(?:don't|do not|without|never) (?:actually |yet )?(?:run|execut|send|post|submit|"
        r"appl|deploy|creat|schedul|book|delet|call|plac|push|merg)\w* (?:it|them|this|that|"
        r"anything|yet|until|before|the (?:query|email|message|deploy|change|order|command))\b",
        r"\b(?:don't|do not) (?:\w+ )?(?:it |them |anything )?yet\b",
        r"\b(?:show|send|give) (?:it |them |this |that )?(?:to )?(?:me )?(?:first|before)\b",
        r"\blet me (?:see|review|check|look at|approve)\b",
        r"\bcheck with me\b|\b(?:for|so) (?:my|me to) (?:review|approval|check)\b",
        r"\b(?:wait|hold) (?:for|until) my\b",
        r"\bbefore (?:you )?(?:actually |really )?(?:run|send|post|submit|apply|deploy|"
        r"execut|creat|book|place|push|merg)\w*",
        r"\b(?:draft|preview|plan) (?:only|first)\b|\bjust (?:a )?(?:draft|plan|preview)\b",
        r"\b(?:review|approve) (?:it |them |this )?(?:first|before)\b",
        r"\bbefore (?:it|they|this|that|anything) (?:runs?|goes? out|is sent|gets? sent|is "
        r"applied|happens|ships|executes?|is posted|gets? posted)\b",
        r"\b(?:run|pass) (?:it|them|this|that) by me\b|\bhold off\b",
        r"\buntil i (?:say|confirm|approve|give|ok|okay|check|review|read|look|sign)\b",
        r"\bjust (?:show|draft|write|prepare|preview)\b|\bdry[- ]run\b",
    ),
)
"""The radar's English markers."""


# -- text analysis -----------------------------------------------------------------------------

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
    r"\((?:[^)]*\b(?:string|str|integer|int|number|float|bool|boolean|array|list|object|dict|"
    r"enum|date|datetime|timestamp|required|optional)\b[^)]*)\)|\b(?:required|optional)\b",
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
class _Mention:
    strength: float
    sentences: set[int] = field(default_factory=set)
    in_list: bool = False
    group: str = ""
    """What matched; two parameters matched by the same words count as one mention."""
    default_only: bool = False
    """Only mentioned to state its default ("access will default to viewer"): not asked."""


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
_ITEM = r"[\w'’/-]+(?: [\w'’/-]+){0,3}"
_ENUM = re.compile(rf"{_ITEM}(?:\s*,\s*{_ITEM}){{1,}}(?:,?\s+(?:and|or|&)\s+{_ITEM})?", re.I)


def _enumerations(text: str) -> list[list[str]]:
    """Comma-separated lists of three or more short items ("title, message and time")."""
    out: list[list[str]] = []
    for match in _ENUM.finditer(text):
        items = re.split(r"\s*,\s*|,?\s+(?:and|&)\s+", match.group(0))
        items = [i for i in items if i]
        if len(items) >= 3:
            out.append(items)
    return out


def category_enabled(markers: HesitationMarkers, category: str) -> bool:
    """Whether `markers` has any pattern in `category` (an empty category switches it off)."""
    return bool(getattr(markers, category))


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


def _field_like(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if before in _FIELD_WRAP or after in _FIELD_WRAP:
        return True
    if re.match(r"\s*(?:[:=]|\((?:[a-z ,|]+)\))", text[end : end + 24]):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return bool(
        re.fullmatch(r"\s*(?:[-*•·‣▪◦]|\d{1,2}[.)])\s*[*_`\"']{0,2}", text[line_start:start])
    )


def _word_regex(words: Sequence[str]) -> re.Pattern[str]:
    parts = [re.escape(w) for w in words]
    if len(words[-1]) > 4 and words[-1].endswith("ies"):
        parts[-1] = re.escape(words[-1][:-3]) + "(?:y|ie)"  # `retries` <- "retry"
    body = r"[\s_\-]+".join(parts)
    return re.compile(rf"(?<![A-Za-z0-9]){body}s?(?![A-Za-z0-9])", re.I)


_NOT_IN_MESSAGE = frozenset({"pleasantry", "tool_question", "review_first"})
"""Marker categories not looked for in the message (courtesy, and those of the request)."""

_DEFAULT_TALK = re.compile(r"\bdefault(?:s|ed)?\b|\bif (?:omitted|unset|not set)\b", re.I)
_CLAUSE_END = re.compile(r"[.;!?\n,(—–]")
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


class _Request:
    """The user's message the model answered, if the caller passed it."""

    def __init__(self, text: str | None, markers: HesitationMarkers):
        self.text = text or ""
        compiled = markers.compiled
        self.about_tool = self._first(compiled["tool_question"], self.text)
        self.review = self._first(compiled["review_first"], self.text)

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


class _Analysis:
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
        for i, (start, end, _) in enumerate(self.sentences):
            if start <= offset < end:
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
                item_words = set(_words(item.strip(" *`'\"()")))
                for param in params:
                    content = {w for w in param.words if w not in _UNIT_WORDS} or set(param.words)
                    if content and content <= item_words:
                        named.add(param.name)
            if len(named) >= 2:
                out.append(named)
        return out

    def _mentions(self, params: Sequence[ParamInfo]) -> dict[str, _Mention]:
        mentions: dict[str, _Mention] = {}
        labels = [set(_words(label)) for label, _ in self.list_labels]
        for param in params:
            if not param.words:
                continue
            key = param.name
            best = 0.0
            group = param.name.lower()
            where: set[int] = set()
            stated = 0  # matches in a clause that states a default
            seen = 0
            for regex in {_word_regex(param.words), _word_regex((param.name.lower(),))}:
                for m in regex.finditer(self.text):
                    exact = self.text[m.start() : m.end()].lower().rstrip("s") == param.name.lower()
                    if self.text[m.start() : m.end()].lower() == param.name.lower():
                        exact = True
                    field_like = _field_like(self.text, m.start(), m.end())
                    if (param.identifier and exact) or field_like:
                        strength = 1.0
                    elif param.common:
                        # "What path should I use?": a common word named as the thing asked.
                        asked = _ASKED_WORD.search(self.said[max(0, m.start() - 12) : m.start()])
                        if not asked or self._sentence_at(m.start()) not in self.questions:
                            continue
                        strength = 0.35
                    elif param.identifier:
                        strength = 0.75
                    else:
                        strength = 0.35
                    best = max(best, strength)
                    where.add(self._sentence_at(m.start()))
                    seen += 1
                    stated += self._states_default(m.start(), m.end())
            in_list = any(
                lw and (lw == set(param.words) or (lw <= set(param.words) and len(lw) >= 1))
                for lw in labels
            ) or any(param.name in listed for listed in self.inline_lists)
            if in_list:
                best = max(best, 1.0)
            if best == 0.0 and param.identifier:
                # All words of a multi-word name in one sentence (units aside: "timeout" for
                # `timeout_seconds`): a loose mention.
                content = [
                    w
                    for w in param.words
                    if w not in _COMMON_WORDS and w not in _UNIT_WORDS and len(w) > 2
                ]
                if content:
                    for i, (_, _, sentence) in enumerate(self.sentences):
                        if all(_word_regex((w,)).search(sentence) for w in content):
                            best = 0.35
                            group = " ".join(content)
                            where.add(i)
                            seen += 1
                            stated += bool(_DEFAULT_TALK.search(sentence))
            if best > 0.0:
                previous = mentions.get(key)
                if previous is None or previous.strength < best:
                    default_only = not in_list and seen > 0 and stated == seen
                    mentions[key] = _Mention(best, where, in_list, group, default_only)
        return mentions

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
        left = max((m.end() for m in _CLAUSE_END.finditer(self.text, 0, start)), default=0)
        right_match = _CLAUSE_END.search(self.text, end)
        right = right_match.start() if right_match else len(self.text)
        return bool(_DEFAULT_TALK.search(self.text[left:right]))

    @cached_property
    def offers_choices(self) -> bool:
        """A question that names concrete alternatives it found ("acme.io or acme.dev?")."""
        for i in self.questions:
            start, end, _ = self.sentences[i]
            piece = self.said[start:end]
            for m in re.finditer(r"\s+or\s+", piece):
                before = piece[: m.start()].rstrip(" )—–-,").split()
                after = piece[m.end() :].split()
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


# -- verdict -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hesitation:
    """The radar's verdict on one message: truthy when it is a stall.

    Attributes:
        stalled: Whether the message is a stall.
        score: The summed evidence (a stall at `threshold` or above).
        reasons: One line per signal that contributed, with its weight, for logs and events.
        params: Parameters of the disclosed schemas that the message mentions.
        tools: Disclosed tools whose parameters the message mentions.
    """

    stalled: bool
    score: float
    reasons: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    threshold: float = DEFAULT_THRESHOLD

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
        }


def _quote(items: Iterable[str], limit: int = 6) -> str:
    seq = list(items)
    shown = ", ".join(seq[:limit])
    return shown + (f", … ({len(seq) - limit} more)" if len(seq) > limit else "")


def detect_hesitation(
    text: str | None,
    schemas: Iterable[Any] = (),
    *,
    request: str | None = None,
    markers: HesitationMarkers = DEFAULT_MARKERS,
    threshold: float = DEFAULT_THRESHOLD,
) -> Hesitation:
    """Decide whether `text`, a model message with no tool call, is a stall.

    Args:
        text: The message text.
        schemas: The tool schemas disclosed so far: `{"name", "parameters"}` dicts (optionally
            with `defaults`), OpenAI-style tool dicts, or LangChain tools (see `parse_schemas`).
        request: The user's message the model answered, if known. It lets the radar tell a
            tool explanation the user asked for, a draft the user wanted to review first, and
            a question about a value the request holds (or lacks) from their look-alikes.
            Without it the radar judges the text and the schemas alone.
        markers: Phrase markers per category (`DEFAULT_MARKERS`: English).
        threshold: Score at or above which the message is a stall.

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
    infos = parse_schemas(schemas)
    params = [p for s in infos for p in s.params]
    by_name = {p.name: p for p in params}
    a = _Analysis(text, params, markers)
    user = _Request(request, markers)
    reasons: list[tuple[float, str]] = []

    def add(weight: float, why: str) -> float:
        reasons.append((weight, why))
        return weight

    def first(category: str) -> str:
        return a.hits[category][0] if a.hits.get(category) else ""

    confirmation = bool(a.hits.get("confirmation"))
    # "It will run at 02:00" reports a done deal only if nobody is asked to confirm it.
    done = [h for h in a.hits.get("completion", []) if not h.lower().startswith("will ")]
    completion = bool(done) or (bool(a.hits.get("completion")) and not confirmation)
    error = bool(a.hits.get("error"))
    request_hit = bool(a.hits.get("request"))
    promise = bool(a.hits.get("promise"))
    outcome = completion or error
    damp = 0.3 if outcome else 1.0

    # Structure: parameters echoed back, lists of fields. A parameter named only to state its
    # default ("access will default to viewer") is reported, not echoed or asked.
    mentioned = sorted(a.mentions, key=lambda n: -a.mentions[n].strength)
    counted = [n for n in mentioned if not a.mentions[n].default_only]
    weight_sum = sum(a.mentions[n].strength for n in counted)
    listed = [n for n in counted if a.mentions[n].in_list]
    typed_lines = sum(1 for _, typed in a.list_labels if typed)
    field_list = len(listed) >= 2 or typed_lines >= 2
    dump = len(counted) >= 3 and weight_sum >= 2.0

    asked_idx = a.asked_sentences()
    asked = [n for n in counted if a.mentions[n].sentences & asked_idx or a.mentions[n].in_list]
    asked = asked if (asked_idx or a.list_labels) else []
    # Parameters asked for by the kind of value ("how many people?" -> a number).
    asked += [n for n in a.kind_asks if n not in asked]
    group = {n: a.mentions[n].group if n in a.mentions else a.kind_asks[n] for n in asked}

    # A title-like value asked in a question could be written from the request, unless the
    # message says why there is nothing to write it from; in a list of values it is a value.
    nothing_to_go_on = bool(a.hits.get("explanation"))

    def needed(n: str) -> bool:
        asked_in_words = n not in a.mentions or bool(a.mentions[n].sentences & asked_idx)
        inferred = by_name[n].inferable and asked_in_words and not nothing_to_go_on
        return by_name[n].critical and not inferred

    # Loose words shared by a critical and an optional parameter ("address" for `to_address`
    # and `from_address`) are read as the critical one: the evidence can't tell them apart.
    critical_words = {group[n] for n in asked if needed(n)}
    optional = [n for n in asked if not needed(n) and group[n] not in critical_words]
    critical = [n for n in asked if needed(n)]
    asked_groups = {group[n] for n in asked if n in critical or n in optional}
    critical_groups = {group[n] for n in critical}
    named_critical = [n for n in counted if needed(n)]
    named_critical += [n for n in critical if n not in named_critical]

    # The user's request, when known: does it already hold the values asked for?
    supplied = [n for n in critical if user.supplies(by_name[n]) is True]
    missing = [n for n in named_critical if user.supplies(by_name[n]) is False]

    schema_talk = bool(a.hit_sentences.get("schema_words", set()) & asked_idx)
    explanation = first("explanation") or first("requirement")
    explained = bool(explanation) or a.offers_choices or bool(missing)
    asks = bool(a.questions) or request_hit
    # A clarifying question asks for values only the user can give: no confirmation, no
    # parameter with a default or optional, no field list, nothing the request already says.
    clarifying = (
        asks
        and not confirmation
        and not (field_list or dump)
        and not optional
        and not schema_talk
        and not supplied
        and a.open_question
    )
    single = clarifying and len(asked_groups) <= 1 and a.asks <= 1
    # Several values are still a clarifying question when all of them are critical (required,
    # no default) and the message says why it must ask: a value is missing or ambiguous, the
    # schema requires it, or here are the alternatives found.
    several = clarifying and not single and not promise and bool(named_critical) and explained

    structural = 0.0
    if field_list or dump:
        what = "lists fields" if field_list else "echoes parameters"
        structural += add(
            3.0 * damp, f"{what} of the disclosed schema: {_quote(listed or counted)}"
        )
    elif counted and not outcome and not several:
        echo = min(1.0, 0.5 * sum(1 for n in counted if a.mentions[n].strength >= 0.75))
        if echo:
            add(echo, f"mentions parameters {_quote(counted)}")

    if optional and not (field_list or dump):
        defaults = [
            f"{n} (default {by_name[n].default!r})"
            if by_name[n].default is not None
            else f"{n} (can be written from the request)"
            if by_name[n].inferable
            else n
            for n in optional
        ]
        add(2.0 * (0.5 if outcome else 1.0), f"asks about non-critical {_quote(defaults)}")
    if supplied and not (field_list or dump):
        add(2.0, f"asks for {_quote(supplied)}, which the request already gives")
    if critical and not (field_list or dump) and not several:
        add(min(1.5, 0.75 * len(critical_groups)) * damp, f"asks for required {_quote(critical)}")

    # Phrases.
    confirming = 0.0
    if confirmation:
        confirming += add(2.0, f"asks for confirmation ({first('confirmation')!r})")
    if request_hit and not several:
        add(1.5, f"asks the user for input ({first('request')!r})")
    if promise and not outcome:
        confirming += add(2.0, f"announces an action without calling a tool ({first('promise')!r})")
    if a.asks >= 2 and not several:
        add(1.5, f"asks for {a.asks} things at once")
    if schema_talk and (request_hit or a.questions):
        add(0.5, f"talks about the form ({first('schema_words')!r})")

    # What a legitimate message looks like.
    if completion:
        add(-2.5, f"reports an outcome ({(done or a.hits['completion'])[0]!r})")
    elif error:
        add(-2.0, f"reports an error ({first('error')!r})")
    why = explanation or ("offers the alternatives it found" if a.offers_choices else "")
    why = why or (f"the request gives no {_quote(missing)}" if missing else "")
    if single:
        add(-2.0, "a single question about one required value")
        if why:
            add(-1.0, f"says why the value is missing ({why!r})")
    elif several:
        add(-2.0, f"a clarifying question about required values only ({_quote(named_critical)})")
        add(-1.0, f"says why it must ask ({why!r})")

    # What the user asked for.
    if user.about_tool:
        positive = sum(w for w, _ in reasons if w > 0)
        if positive:
            add(-positive, f"the user asked about the tool ({user.about_tool!r}): an explanation")
    elif user.review and (confirming or structural):
        add(
            -(confirming + structural),
            f"the user asked to see it first ({user.review!r}): a draft for review",
        )

    score = sum(w for w, _ in reasons)
    ordered = [
        f"{why} [{w:+.2f}]" for w, why in sorted(reasons, key=lambda r: -abs(r[0])) if w != 0
    ]
    tools = sorted({by_name[n].tool for n in mentioned if by_name[n].tool})
    return Hesitation(
        stalled=score >= threshold,
        score=score,
        reasons=tuple(ordered),
        params=tuple(mentioned),
        tools=tuple(tools),
        threshold=threshold,
    )
