"""Tool calls written as text: find them (`parse`, pure), judge whether the reply is a call the
thread asked for (`context`, pure), and turn offered ones into real calls
(`TextToolCallMiddleware`), for small local models whose server does not parse their calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.textcalls.middleware import (
        TextToolCallMiddleware,
        convert_text_calls,
        text_calls_to_run,
    )
    from attention_scoping.textcalls.parse import (
        ReplyCalls,
        TextCall,
        find_text_calls,
        offered_calls,
        reply_calls,
        strip_calls,
    )

_EXPORTS = {
    "ReplyCalls": "parse",
    "TextCall": "parse",
    "TextToolCallMiddleware": "middleware",
    "convert_text_calls": "middleware",
    "find_text_calls": "parse",
    "offered_calls": "parse",
    "reply_calls": "parse",
    "strip_calls": "parse",
    "text_calls_to_run": "middleware",
}

__all__ = [
    "ReplyCalls",
    "TextCall",
    "TextToolCallMiddleware",
    "convert_text_calls",
    "find_text_calls",
    "offered_calls",
    "reply_calls",
    "strip_calls",
    "text_calls_to_run",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
