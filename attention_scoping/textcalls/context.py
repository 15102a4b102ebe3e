"""Whether a text call the reply makes was asked for: the thread around it (pure, no LangChain).

A reply that *is* a call (see `parse.reply_calls`) still does not run when the thread says it is
not one: the user's last message asks to see JSON or an example, or forbids running anything
("show me the JSON for send_email, do not send it"), or the call is a copy of a call-shaped
object a tool returned (a web page or an email body that carries
`{"name": "send_email", ...}` is data, not an instruction). Messages are read through
`common.messages`, so plain objects with `type` and `content` work as well as LangChain's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from attention_scoping.common.messages import MessageLike, is_user_turn, text_of
from attention_scoping.textcalls.parse import TextCall, as_call, json_spans, loads_bounded

__all__ = ["USER_TEXT_CHARS", "copied_from_tool_result", "decline_reason", "user_wants_text"]

USER_TEXT_CHARS = 8_000
"""Characters of the user's last message read for "show me the JSON" (its head)."""

_SENTENCE = re.compile(r"[.!?;\n]+")
_SHOW = re.compile(
    r"\b(?:show|print|display|give me|write(?: out)?|output|generate|produce|paste|draft|"
    r"compose|preview|spell out|what(?:'s| is| would| does| should)|how (?:do|would|does|should|"
    r"can|to)|demonstrat\w*)\b",
    re.IGNORECASE,
)
"""Asking to see something (in the same sentence as `_JSON_WORDS`)."""
_JSON_WORDS = re.compile(
    r"\b(?:json|example|sample|payload|snippet|template|request body|(?:tool|function|api) "
    r"call|raw call|schema|syntax|(?:the|a) call (?:would |will |should )?looks? like|format "
    r"(?:of|for) (?:the|a|an) (?:call|request))\b",
    re.IGNORECASE,
)
"""What the user asks to see: JSON, an example, the shape of a call."""
_FORBIDS = re.compile(
    r"\b(?:don't|do not|dont|without|never) (?:actually |yet |really )?(?:\w+ )?"
    r"(?:run(?:ning)?|send(?:ing)?|call(?:ing)?|execut\w*|submit\w*|post(?:ing)?|creat\w*|"
    r"schedul\w*|book(?:ing)?|delet\w*|pay(?:ing)?|transfer\w*|invok\w*|trigger\w*|do it)\b|"
    r"\bjust (?:show|print|the json|an example)\b|\bdry[- ]run\b",
    re.IGNORECASE,
)


def user_wants_text(user_text: str) -> str:
    """The phrase by which the user's message asks to see JSON or an example of a call, or
    forbids running anything; "" when it does neither (a plain request may be acted on)."""
    text = user_text[:USER_TEXT_CHARS]
    forbids = _FORBIDS.search(text)
    if forbids:
        return forbids.group(0)
    start = 0
    for end in [m.start() for m in _SENTENCE.finditer(text)] + [len(text)]:
        sentence = text[start:end]
        shown, noun = _SHOW.search(sentence), _JSON_WORDS.search(sentence)
        if shown and noun:
            return sentence.strip()
        start = end
    return ""


def _canonical(call: TextCall) -> tuple[str, str]:
    return call.name, json.dumps(call.arguments, sort_keys=True, default=str)


def _values(text: str) -> Iterator[Any]:
    """Every JSON value decodable from `text` (its bracket spans), within the depth cap."""
    for a, b in json_spans(text):
        try:
            yield loads_bounded(text[a:b])
        except ValueError:
            continue


def _tool_calls_in(text: str) -> set[tuple[str, str]]:
    """Every call-shaped object in a tool result, at any depth, JSON inside strings included."""
    found: set[tuple[str, str]] = set()
    work: list[Any] = list(_values(text))
    while work:
        value = work.pop()
        if isinstance(value, Mapping):
            call = as_call(value, "tool")
            if call is not None:
                found.add(_canonical(call))
            work.extend(value.values())
        elif isinstance(value, list):
            work.extend(value)
        elif isinstance(value, str) and ("{" in value or "[" in value):
            work.extend(_values(value))
    return found


def copied_from_tool_result(calls: Sequence[TextCall], thread: Sequence[MessageLike]) -> bool:
    """Whether any of `calls` is identical (name and arguments) to a call-shaped object in a
    tool result of the thread."""
    wanted = {_canonical(c) for c in calls}
    for message in thread:
        if message.type != "tool":
            continue
        text = text_of(message)
        if ("{" in text or "[" in text) and wanted & _tool_calls_in(text):
            return True
    return False


def _last_user_text(thread: Sequence[MessageLike]) -> str:
    for message in reversed(thread):
        if is_user_turn(message):
            return text_of(message)
    return ""


def decline_reason(calls: Sequence[TextCall], thread: Sequence[MessageLike]) -> str | None:
    """Why the thread says the reply's calls are not calls, or None when they may run."""
    asked = user_wants_text(_last_user_text(thread))
    if asked:
        return f"the user asked to see it, not to run it ({asked[:80]!r})"
    if copied_from_tool_result(calls, thread):
        return "the call is a copy of one in a tool result"
    return None
