"""Find tool calls that a model wrote as text instead of `tool_calls` (pure, no LangChain).

Small open models served without a matching chat template often answer with the call in the
content: a fenced ```` ```json {"name": ..., "arguments": ...} ``` ```` block (sometimes opened
with `{{`), `<tool_call>...</tool_call>` tags, or bare JSON. `find_text_calls` returns every
call-shaped object in a text; `offered_calls` keeps only those naming an offered tool, which is
the only safe conversion (a name the agent never offered is a hallucination, not a call).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "tool_input", "input")


@dataclass(frozen=True)
class TextCall:
    """One tool call found in message text."""

    name: str
    arguments: dict[str, Any] = field(hash=False)
    source: str
    """How it was written: `tag`, `fence` or `bare`."""


def _arguments(value: Any) -> dict[str, Any] | None:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return None
    return dict(value) if isinstance(value, Mapping) else None


def _as_call(obj: Any, source: str) -> TextCall | None:
    """A `TextCall` when `obj` has the shape of one (name + object arguments), else None."""
    if not isinstance(obj, Mapping):
        return None
    inner = obj.get("function")
    if isinstance(inner, Mapping):
        return _as_call(inner, source)
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if not name:
        return None
    present = [k for k in _ARG_KEYS if k in obj]
    if not present:
        # {"name": "x"} alone is a call without arguments only when nothing else is there.
        return TextCall(name, {}, source) if set(obj) <= set(_NAME_KEYS) | {"type"} else None
    args = _arguments(obj[present[0]])
    return None if args is None else TextCall(name, args, source)


def _calls_in(obj: Any, source: str) -> list[TextCall]:
    items = obj if isinstance(obj, list) else [obj]
    calls = [_as_call(item, source) for item in items]
    return [c for c in calls if c is not None]


def _json_values(text: str) -> Iterator[Any]:
    """Every JSON object or array that starts at a `{` or `[` in `text`, left to right."""
    decoder = json.JSONDecoder()
    i = 0
    while i < len(text):
        if text[i] not in "{[":
            i += 1
            continue
        candidates = [text[i:]]
        if text.startswith("{{", i):  # `{{"name": ...}}`: a template's escaped braces
            candidates.insert(0, text[i + 1 :])
        for candidate in candidates:
            try:
                value, end = decoder.raw_decode(candidate)
            except json.JSONDecodeError:
                continue
            yield value
            i += end + (len(text) - i - len(candidate))
            break
        else:
            i += 1


def _from_block(block: str, source: str) -> list[TextCall]:
    calls: list[TextCall] = []
    for value in _json_values(block):
        calls.extend(_calls_in(value, source))
    return calls


def find_text_calls(text: str) -> list[TextCall]:
    """Every tool call written in `text`: tags first, then fenced blocks, then bare JSON."""
    if not text or ("{" not in text and "[" not in text):
        return []
    tagged = [call for m in _TAG.finditer(text) for call in _from_block(m.group(1), "tag")]
    if tagged:
        return tagged
    fenced = [call for m in _FENCE.finditer(text) for call in _from_block(m.group(1), "fence")]
    if fenced:
        return fenced
    return _from_block(text, "bare")


def offered_calls(text: str, offered: Collection[str]) -> tuple[list[TextCall], list[TextCall]]:
    """The text calls split into (naming an offered tool, naming anything else)."""
    found = find_text_calls(text)
    return [c for c in found if c.name in offered], [c for c in found if c.name not in offered]


def strip_calls(text: str) -> str:
    """`text` without tool-call tags and fenced JSON blocks (what is left to show as prose)."""
    text = _TAG.sub("", text)
    text = _FENCE.sub("", text)
    return text.strip()
