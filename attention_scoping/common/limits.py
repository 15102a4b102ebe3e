"""Size and depth limits for JSON from outside: a model's arguments, a tool's result, a file.

Pure and iterative (no recursion anywhere), so 100,000 levels of nesting or a 5,000-digit number
become a one-line problem instead of a `RecursionError` in `json`, `jsonschema` or `repr`. The
gateway checks arguments and results with these; any other reader of untrusted JSON should too.

`clip` / `clip_content` are the one bound on what a tool result puts into a conversation
(`RESULT_MAX_CHARS`): the MCP tools, the gateway and the scoping and gating middlewares all cut
with them, the cut marked and the full size reported (`cut_mark`; `clip_head` when the bound is
on the characters shown rather than on the whole). `shorten` is the one other form, on purpose:
a model's own short value (a tool name, a query) echoed inside a sentence ends in one `…`,
where the mark would be longer than the echo.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ECHO_MAX_CHARS",
    "MIN_RESULT_CHARS",
    "PREVIEW_CHARS",
    "RESULT_MAX_CHARS",
    "JsonLimits",
    "LimitExceeded",
    "check_result_limit",
    "clip",
    "clip_content",
    "clip_head",
    "content_size",
    "cut_mark",
    "json_result",
    "load_json_text",
    "measure",
    "shorten",
]

_LEAVES = (str, int, float, bool, type(None))
_LOG10_2 = 0.30103


@dataclass(frozen=True)
class JsonLimits:
    """Bounds on one JSON value.

    Example:
        ```python
        ToolGateway(tools, argument_limits=JsonLimits(max_depth=16, max_chars=100_000))
        ```
    """

    max_depth: int = 64
    """Nesting levels of objects and arrays (tool arguments rarely exceed 10)."""
    max_chars: int = 1_000_000
    """Characters of every string, key and number together (about the size of its JSON)."""
    max_digits: int = 1_000
    """Digits of any one integer (Python refuses to print past 4,300)."""

    def __post_init__(self) -> None:
        """Every bound is at least 1."""
        for name in ("max_depth", "max_chars", "max_digits"):
            if getattr(self, name) < 1:
                msg = f"JsonLimits.{name} must be at least 1, not {getattr(self, name)}"
                raise ValueError(msg)


@dataclass(frozen=True)
class LimitExceeded:
    """Which limit a value broke, in words a model can act on."""

    rule: str
    """`maxDepth`, `maxSize` or `maxDigits`."""
    message: str
    """What is too big, and the limit."""


def _int_digits(value: int) -> int:
    return max(1, int(abs(value).bit_length() * _LOG10_2))


def _leaf_size(value: Any, limits: JsonLimits) -> int | LimitExceeded:
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, int) and not isinstance(value, bool):
        digits = _int_digits(value)
        if digits > limits.max_digits:
            return LimitExceeded(
                "maxDigits", f"an integer has about {digits:,} digits (limit {limits.max_digits:,})"
            )
        return digits
    return 5  # float, bool, None: a handful of characters


def measure(value: Any, limits: JsonLimits) -> LimitExceeded | None:
    """The first limit `value` breaks, or None. Objects of other types count as leaves.

    Walks at most `limits.max_chars` nodes, whatever the value's size.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    size = 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (Mapping, list, tuple)):
            if depth >= limits.max_depth:
                return LimitExceeded("maxDepth", f"it nests deeper than {limits.max_depth} levels")
            size += 2 + len(item)
            if size > limits.max_chars:
                break
            if isinstance(item, Mapping):
                size += sum(len(k) + 3 for k in item if isinstance(k, str))
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, depth + 1) for child in children)
        else:
            leaf = _leaf_size(item, limits) if isinstance(item, _LEAVES) else 5
            if isinstance(leaf, LimitExceeded):
                return leaf
            size += leaf
        if size > limits.max_chars:
            break
    else:
        return None
    return LimitExceeded("maxSize", f"it is larger than {limits.max_chars:,} characters")


def load_json_text(text: str, limits: JsonLimits) -> tuple[Any, LimitExceeded | None]:
    """Parse JSON `text` within `limits`: (value, None), or (None, the limit it breaks).

    Raises:
        ValueError: `text` is not JSON (as `json.loads` does).
    """
    if len(text) > limits.max_chars:
        return None, LimitExceeded("maxSize", f"it is larger than {limits.max_chars:,} characters")
    try:
        value = json.loads(text)
    except RecursionError:  # the C decoder gives up cleanly, past the interpreter's limit
        return None, LimitExceeded("maxDepth", f"it nests deeper than {limits.max_depth} levels")
    problem = measure(value, limits)
    return (None, problem) if problem is not None else (value, None)


PREVIEW_CHARS = 2_000
"""How much of an oversized text result is shown."""

RESULT_MAX_CHARS = 100_000
"""The most characters one tool result puts into a conversation (about 25,000 tokens): it stays
in the checkpointed state and is sent again with every later request of the thread."""

MIN_RESULT_CHARS = 200
"""The smallest result bound accepted (room for the cut mark and some text)."""


def check_result_limit(
    limit: int | None, what: str = "result_max_chars", *, allow_none: bool = True
) -> int | None:
    """`limit` when it is an int of at least `MIN_RESULT_CHARS` (or None, no bound, when
    `allow_none`).

    Raises:
        ValueError: naming `what`, the bad value and the valid ones.
    """
    if limit is None and allow_none:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < MIN_RESULT_CHARS:
        valid = "None or an integer" if allow_none else "an integer"
        msg = f"{what} must be {valid} of at least {MIN_RESULT_CHARS}, not {limit!r}"
        raise ValueError(msg)
    return limit


def cut_mark(total: int, shown: int) -> str:
    """The line that ends a cut result: how big the whole was and how much is shown."""
    return f"\n[... cut: {total:,} characters, showing the first {shown:,}]"


def clip(text: str, limit: int = RESULT_MAX_CHARS, total: int | None = None) -> str:
    """`text` unchanged when it fits in `limit` characters; else its head and `cut_mark`, the
    two together at most `limit` long (so clipping twice changes nothing). `total`, when
    `text` is already a cut head of something longer: its full size (the cut is marked even
    when the head fits)."""
    if len(text) <= limit and total is None:
        return text
    total = max(total or 0, len(text))
    shown = max(0, limit - len(cut_mark(total, limit)))
    while shown < len(text) and shown + 1 + len(cut_mark(total, shown + 1)) <= limit:
        shown += 1  # a shorter count leaves room for a character or two more
    shown = min(shown, len(text))
    return text[:shown] + cut_mark(total, shown)


def clip_head(text: str, shown: int) -> str:
    """`text` unchanged when it has at most `shown` characters; else its first `shown` and
    `cut_mark` (the mark not counted): for bounds that say how much of a result is shown."""
    return text if len(text) <= shown else text[:shown] + cut_mark(len(text), shown)


ECHO_MAX_CHARS = 200
"""A model's own text (a tool name, a query, a scope name) is echoed back at most this long."""


def shorten(text: str, limit: int = ECHO_MAX_CHARS) -> str:
    """`text` within `limit` characters, a cut ending in `…`: for a short value echoed inside
    a sentence or a payload field (see the module's note on the two forms)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


_LABELS = frozenset({"type", "mime_type", "id"})
"""Keys of a content block that label it rather than carry its content."""


def _block_size(block: Any) -> int:
    """Characters of one content block: a string, or every string value of a dict block."""
    if isinstance(block, str):
        return len(block)
    if isinstance(block, Mapping):
        return sum(len(v) for k, v in block.items() if isinstance(v, str) and k not in _LABELS)
    return 0


def content_size(content: Any) -> int:
    """Characters of a message's content: its text, or the sum over its blocks."""
    if isinstance(content, str):
        return len(content)
    return sum(_block_size(b) for b in content) if isinstance(content, list) else 0


def _clip_blocks(blocks: list[Any], limit: int, total: int) -> list[Any]:
    """Blocks in order while they fit, the head of a text block that does not, then the mark
    (a non-text block that does not fit, an image say, is left out whole)."""
    budget = max(0, limit - len(cut_mark(total, limit)))
    kept: list[Any] = []
    shown = 0
    for block in blocks:
        size = _block_size(block)
        if shown + size <= budget:
            kept.append(block)
            shown += size
            continue
        room = budget - shown
        if isinstance(block, str) and room > 0:
            kept.append(block[:room])
            shown += room
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str) and room > 0:
            kept.append({**block, "text": block["text"][:room]})
            shown += room
        break
    kept.append({"type": "text", "text": cut_mark(total, shown).lstrip()})
    return kept


def clip_content(content: Any, limit: int = RESULT_MAX_CHARS, total: int | None = None) -> Any:
    """A message's content (text, or a list of blocks) within `limit` characters, as `clip`
    (`total` too); returned as given (the same object) when it fits."""
    if isinstance(content, str):
        return clip(content, limit, total)
    size = content_size(content)
    if isinstance(content, list) and (size > limit or total is not None):
        return _clip_blocks(content, limit, max(total or 0, size))
    return content


def _text_of(value: Any, limits: JsonLimits) -> str:
    try:
        text = str(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    return clip(text, limits.max_chars)


def json_result(value: Any, limits: JsonLimits) -> tuple[Any, LimitExceeded | None, str | None]:
    """A tool's result made JSON-safe within `limits`: `(value, None, None)`, or
    `(None, the limit it breaks, a preview of text results)`.

    JSON text is parsed (so a tool returning JSON reads as data), Pydantic models are dumped,
    anything else that `json` cannot write becomes its `str()`.
    """
    if isinstance(value, str):
        try:
            parsed, exceeded = load_json_text(value, limits)
        except ValueError:  # plain text, not JSON (and within the size bound)
            return value, None, None
        if exceeded is not None:
            return None, exceeded, clip(value, PREVIEW_CHARS)
        return parsed, None, None
    if hasattr(value, "model_dump"):
        try:
            value = value.model_dump()
        except RecursionError:
            return None, LimitExceeded("maxDepth", "it nests too deep to convert"), None
    exceeded = measure(value, limits)
    if exceeded is not None:
        return None, exceeded, None
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return _text_of(value, limits), None, None
    return value, None, None
