"""Find tool calls that a model wrote as text instead of `tool_calls` (pure, no LangChain).

Small open models served without a matching chat template often answer with the call in the
content: a fenced ```` ```json {"name": ..., "arguments": ...} ``` ```` block (sometimes opened
with `{{`), `<tool_call>...</tool_call>` tags, or bare JSON. `find_text_calls` returns every
call-shaped object in a text; `reply_calls` says whether the reply *is* a call (the call alone,
optionally fenced or tagged, after at most a short lead-in), which is the only form that may run.

The scan is one left-to-right pass with an explicit stack (no recursion): every balanced bracket
span is found in time linear in the text, and a span nested deeper than `MAX_JSON_DEPTH` is never
handed to the JSON decoder, so a reply of 100,000 nested brackets is read, not a `RecursionError`.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from attention_scoping.errors import AttentionScopingError

__all__ = [
    "LEAD_IN_CHARS",
    "MAX_JSON_DEPTH",
    "ReplyCalls",
    "TextCall",
    "as_call",
    "find_text_calls",
    "json_spans",
    "loads_bounded",
    "offered_calls",
    "reply_calls",
    "strip_calls",
]

MAX_JSON_DEPTH = 64
"""Deepest bracket nesting decoded as JSON; deeper spans are skipped (no call needs more)."""

LEAD_IN_CHARS = 200
"""Most prose before a call for the reply to still be that call ("Sure, adding them now:")."""

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "tool_input", "input")
_OPEN_TAG, _CLOSE_TAG = "<tool_call>", "</tool_call>"
_FENCE = "```"
_FENCE_LANG = re.compile(r"[a-zA-Z0-9_-]*[ \t]*\n?")
_STRUCTURAL = re.compile(r'[\[\]{}"]')
_IN_STRING = re.compile(r'["\\]')
_PAIRS = {"}": "{", "]": "["}
_TAIL = re.compile(r"(?:\s|<\|?/?[\w|]{1,40}\|?>)*")
"""What may follow a call: whitespace and chat-template tokens (`<|im_end|>`, `</tool_call>`)."""
_QUOTE_CHARS = "\"'`“‘«"
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_EXAMPLE_WORDS = re.compile(
    r"\b(?:example|sample|for instance|e\.g\.|illustrat\w*|template|format(?:ted)?|shape|"
    r"structure|schema|payload|snippet|looks? like|would (?:be|look)|could (?:be|look)|"
    r"should look|for reference|syntax|hypothetical\w*|pseudo\w*|"
    r"(?:don't|do not|won't|will not|not going to|without|never) (?:\w+ )?(?:run|send|call|"
    r"execut\w*|creat\w*|submit|post|schedul\w*|actually)|instead|you (?:can|could|would|"
    r"should|might)|copy|paste|curl|request body|the json (?:for|of)|json for|quoted?|"
    r"quoting)\b",
    re.IGNORECASE,
)
"""Lead-in words that present JSON as an example, a quote or a sample, not as the call."""


@dataclass(frozen=True)
class TextCall:
    """One tool call found in message text."""

    name: str
    arguments: dict[str, Any] = field(hash=False)
    source: str
    """How it was written: `tag`, `fence` or `bare`."""


@dataclass(frozen=True)
class ReplyCalls:
    """A reply that is one or more tool calls: the calls and the short prose before them."""

    calls: list[TextCall]
    lead_in: str
    source: str
    """`tag`, `fence` or `bare`."""


# -- bracket spans and bounded decoding ------------------------------------------------------


def _string_end(text: str, i: int, end: int) -> int:
    """Index just past the JSON string opening at `text[i]` (or `end` when it never closes)."""
    j = i + 1
    while j < end:
        m = _IN_STRING.search(text, j, end)
        if m is None:
            return end
        if m.group(0) == "\\":
            j = m.end() + 1
            continue
        return m.end()
    return end


def json_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """`(start, end)` of each outermost balanced `{...}` / `[...]` span in `text[start:end]`,
    left to right, nested at most `MAX_JSON_DEPTH` levels; one pass with an explicit stack.

    A bracket left open does not hide the complete spans after it (`{{"name": ...}` yields the
    inner object); a mismatched closer ends the spans it breaks, which are then skipped.
    """
    stop = len(text) if end is None else end
    stack: list[list[Any]] = []  # [open char, position, deepest inner level, parent position, ok]
    found: list[tuple[int, int, int]] = []  # (start, end, parent position or -1)
    i = start
    while i < stop:
        m = _STRUCTURAL.search(text, i, stop)
        if m is None:
            break
        c, i = m.group(0), m.start()
        if c == '"':
            i = _string_end(text, i, stop) if stack else i + 1
            continue
        if c in "{[":
            parent = stack[-1][1] if stack else -1
            stack.append([c, i, 0, parent, True])
        elif stack:
            opener = stack.pop()
            ok = opener[4] and _PAIRS[c] == opener[0] and opener[2] < MAX_JSON_DEPTH
            if stack:
                stack[-1][2] = max(stack[-1][2], opener[2] + 1)
                stack[-1][4] = stack[-1][4] and ok
            if ok:
                found.append((opener[1], i + 1, opener[3]))
        i += 1
    open_left = {entry[1] for entry in stack}
    # Outermost: no parent, or a parent bracket that was never closed.
    for span_start, span_end, parent in sorted(found):
        if parent == -1 or parent in open_left:
            yield span_start, span_end


def _depth_ok(text: str) -> bool:
    """Whether every bracket span of `text` (a string argument, say) is within the cap."""
    depth = deepest = 0
    i = 0
    while i < len(text):
        m = _STRUCTURAL.search(text, i)
        if m is None:
            break
        c, i = m.group(0), m.start()
        if c == '"':
            i = _string_end(text, i, len(text))
            continue
        depth = depth + 1 if c in "{[" else max(0, depth - 1)
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return False
        i += 1
    return True


class TooDeepError(AttentionScopingError, ValueError):
    """JSON nested deeper than `MAX_JSON_DEPTH` (a `ValueError`, like `json.loads`'s own)."""


def loads_bounded(text: str) -> Any:
    """`json.loads(text)`, refusing text nested deeper than `MAX_JSON_DEPTH` (`TooDeepError`;
    invalid JSON raises `json.JSONDecodeError`, both `ValueError`s)."""
    if not _depth_ok(text):
        msg = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        raise TooDeepError(msg)
    return json.loads(text)


def _decode_span(span: str) -> tuple[bool, Any]:
    """(decoded, value) of one bracket span; a template's `{{...}}` is read as `{...}`."""
    try:
        return True, json.loads(span)
    except ValueError:
        pass
    if span.startswith("{{"):
        try:
            return True, json.JSONDecoder().raw_decode(span[1:])[0]
        except ValueError:
            pass
    return False, None


# -- call shapes -----------------------------------------------------------------------------


def _arguments(value: Any) -> dict[str, Any] | None:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = loads_bounded(value) if value.strip() else {}
        except ValueError:
            return None
    return dict(value) if isinstance(value, Mapping) else None


def as_call(obj: Any, source: str) -> TextCall | None:
    """A `TextCall` when `obj` has the shape of one (name + object arguments), else None."""
    if not isinstance(obj, Mapping):
        return None
    inner = obj.get("function")
    if isinstance(inner, Mapping):
        obj = inner
        if isinstance(obj.get("function"), Mapping):
            return None  # one level of OpenAI's wrapping is a call; more is not
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if not name:
        return None
    present = [k for k in _ARG_KEYS if k in obj]
    if not present:
        # {"name": "x"} alone is a call without arguments only when nothing else is there.
        return TextCall(name, {}, source) if set(obj) <= set(_NAME_KEYS) | {"type"} else None
    args = _arguments(obj[present[0]])
    return None if args is None else TextCall(name, args, source)


def _calls_in(obj: Any, source: str) -> list[TextCall] | None:
    """The calls of one decoded value (an object or a list of them); None when any item of it
    is not a call."""
    items = obj if isinstance(obj, list) else [obj]
    calls = [as_call(item, source) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


@dataclass(frozen=True)
class _Block:
    """A stretch of the reply that holds JSON: a tag, a fence, or a bare span."""

    start: int
    end: int
    inner_start: int
    inner_end: int
    source: str


def _tag_blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    i = text.find(_OPEN_TAG)
    while i != -1:
        inner = i + len(_OPEN_TAG)
        close = text.find(_CLOSE_TAG, inner)
        end = len(text) if close == -1 else close + len(_CLOSE_TAG)
        blocks.append(_Block(i, end, inner, len(text) if close == -1 else close, "tag"))
        i = text.find(_OPEN_TAG, end)
    return blocks


def _fence_blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    i = text.find(_FENCE)
    while i != -1:
        lang = _FENCE_LANG.match(text, i + len(_FENCE))
        inner = lang.end() if lang else i + len(_FENCE)
        close = text.find(_FENCE, inner)
        if close == -1:
            break
        blocks.append(_Block(i, close + len(_FENCE), inner, close, "fence"))
        i = text.find(_FENCE, close + len(_FENCE))
    return blocks


def _block_calls(text: str, block: _Block) -> list[TextCall]:
    """Every call-shaped value in a block (for `find_text_calls`)."""
    calls: list[TextCall] = []
    for a, b in json_spans(text, block.inner_start, block.inner_end):
        decoded, value = _decode_span(text[a:b])
        found = _calls_in(value, block.source) if decoded else None
        calls.extend(found or [])
    return calls


def find_text_calls(text: str) -> list[TextCall]:
    """Every call-shaped object written in `text`: tags first, then fenced blocks, then bare
    JSON; whether the reply *is* a call is `reply_calls`'s question."""
    if not text or ("{" not in text and "[" not in text):
        return []
    for blocks in (_tag_blocks(text), _fence_blocks(text)):
        calls = [c for block in blocks for c in _block_calls(text, block)]
        if calls:
            return calls
    return _block_calls(text, _Block(0, len(text), 0, len(text), "bare"))


# -- is the reply the call? ------------------------------------------------------------------


def _only_call(text: str, block: _Block) -> list[TextCall] | None:
    """The calls of a block that holds nothing but one JSON value of calls, else None."""
    spans = list(json_spans(text, block.inner_start, block.inner_end))
    if len(spans) != 1:
        return None
    a, b = spans[0]
    if text[block.inner_start : a].strip() or text[b : block.inner_end].strip():
        return None  # code around the JSON: a sample (`curl -d '{...}'`, `send({...})`)
    decoded, value = _decode_span(text[a:b])
    return _calls_in(value, block.source) if decoded else None


def _bare_blocks(text: str) -> list[_Block]:
    return [_Block(a, b, a, b, "bare") for a, b in json_spans(text)]


def _without_thinking(text: str) -> str:
    """`text` without `<think>...</think>` reasoning (reasoning models write it before a call)."""
    kept: list[str] = []
    pos = 0
    start = text.find(_THINK_OPEN)
    while start != -1:
        close = text.find(_THINK_CLOSE, start)
        if close == -1:
            break
        kept.append(text[pos:start])
        pos = close + len(_THINK_CLOSE)
        start = text.find(_THINK_OPEN, pos)
    kept.append(text[pos:])
    return "".join(kept)


def _lead_in_ok(lead_in: str) -> bool:
    """A short lead-in that does not present what follows as an example, sample or quote."""
    lead_in = _without_thinking(lead_in)
    stripped = lead_in.strip()
    if len(stripped) > LEAD_IN_CHARS or _EXAMPLE_WORDS.search(stripped):
        return False
    last_line = lead_in.rsplit("\n", 1)[-1].lstrip()
    return not (stripped and stripped[-1] in _QUOTE_CHARS) and not last_line.startswith(">")


def _separated(text: str, blocks: list[_Block]) -> bool:
    """Only whitespace between the blocks, and only whitespace or template tokens after."""
    for before, after in itertools.pairwise(blocks):
        if text[before.end : after.start].strip():
            return False
    return _TAIL.fullmatch(text, blocks[-1].end) is not None


def reply_calls(text: str) -> ReplyCalls | None:
    """The calls of a reply that *is* a call, else None.

    The reply is the call (tagged, fenced or bare JSON; several in a row are several calls)
    after at most a short lead-in (`LEAD_IN_CHARS`) that does not call it an example, a sample,
    a quote or something not to run, with nothing after it but whitespace and template tokens.
    A call inside quotes, a fence holding code around the JSON, or JSON inside prose is not.
    """
    if not text or ("{" not in text and "[" not in text):
        return None
    for blocks in (_tag_blocks(text), _fence_blocks(text), _bare_blocks(text)):
        if not blocks:
            continue
        per_block = [_only_call(text, b) for b in blocks]
        if all(calls is None for calls in per_block):
            continue
        if any(calls is None for calls in per_block) or not _separated(text, blocks):
            return None
        lead_in = text[: blocks[0].start]
        if not _lead_in_ok(lead_in):
            return None
        calls = [c for block_calls in per_block for c in block_calls or []]
        return ReplyCalls(calls, lead_in.strip(), blocks[0].source)
    return None


def offered_calls(text: str, offered: Collection[str]) -> tuple[list[TextCall], list[TextCall]]:
    """The calls of a reply that is a call, split into (naming an offered tool, naming
    anything else); both empty when the reply is not a call."""
    found = reply_calls(text)
    calls = found.calls if found is not None else []
    return [c for c in calls if c.name in offered], [c for c in calls if c.name not in offered]


def strip_calls(text: str) -> str:
    """`text` without tool-call tags and fenced blocks (what is left to show as prose)."""
    blocks = sorted([*_tag_blocks(text), *_fence_blocks(text)], key=lambda b: b.start)
    kept: list[str] = []
    pos = 0
    for block in blocks:
        if block.start < pos:
            continue
        kept.append(text[pos : block.start])
        pos = block.end
    kept.append(text[pos:])
    return "".join(kept).strip()
