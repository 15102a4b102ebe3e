"""Chat-template markup a small model copies into its text (pure, no LangChain).

A chat template renders tools and tool results with tags (Qwen and Hermes-style templates:
`<tools>`, `<tool_response>`; special tokens such as `<|im_end|>`). A small model reads them in
the history and writes them back: a call wrapped in `<tools>...</tools>`, or an answer wrapped in
`<tool_response>` as if a tool had returned it. Left in the history, that markup is copied again
on the next turn. `strip_markup` removes those tags and keeps every word between them;
`keyed_call` reads the one call shape that remains once they are gone
(`name: get_forecast` / `arguments: {...}` on two lines).

`<tool_call>` is not markup here: it wraps a call, and `parse` reads it as one.
"""

from __future__ import annotations

import re

from attention_scoping.textcalls.parse import TextCall, loads_bounded

__all__ = ["MARKUP_TAGS", "keyed_call", "strip_markup"]

MARKUP_TAGS = (
    "tools",
    "tool_response",
    "tool_responses",
    "tool_result",
    "tool_results",
    "function_results",
    "functions",
)
"""Template tags that are never the answer itself: the tool list and tool results."""

_TAGS = "|".join(MARKUP_TAGS)
_TAG = re.compile(rf"<\|[\w|]{{1,40}}\|>|</?(?:{_TAGS})\s*>", re.IGNORECASE)
_KEYED = re.compile(
    r"\A\s*(?:name|tool|function)\s*[:=]\s*[\"'`]?(?P<name>[A-Za-z_][\w.\-]{0,127})[\"'`]?\s*\n"
    r"\s*(?:arguments|parameters|args|input)\s*[:=]\s*(?P<args>\{.*\})\s*\Z",
    re.DOTALL,
)


def strip_markup(text: str) -> str:
    """`text` without template tags (`MARKUP_TAGS`, `<|...|>` tokens); unchanged (the same
    string) when it has none. What stood between the tags is kept, trimmed."""
    if "<" not in text or not _TAG.search(text):
        return text
    return _TAG.sub("", text).strip()


def keyed_call(text: str) -> TextCall | None:
    """The call of a reply written as `name: X` then `arguments: {...}` (after `strip_markup`),
    else None: nothing else may stand before or after, and the arguments must be a JSON object."""
    match = _KEYED.match(text)
    if match is None:
        return None
    try:
        args = loads_bounded(match.group("args"))
    except ValueError:
        return None
    return TextCall(match.group("name"), dict(args), "keyed") if isinstance(args, dict) else None
