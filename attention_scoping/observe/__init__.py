"""Observe: what an agent sends a model, seen from outside, without changing it.

The tools tax (`tax`: token counts of a tools array and of prompt layers, as providers receive
them), `RequestLogMiddleware` (`request_log`: every model request written to a session file,
rendered byte-stably by `render`) and the shared JSON-lines files it appends to (`jsonl`). The
measuring tools (`attention-scoping audit`, `bill`, ...) live in the separate distribution
`attention-scoping-lab` and read what these write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.observe.request_log import RequestLogMiddleware
    from attention_scoping.observe.tax import per_tool_tokens, tool_tokens, tools_json

_EXPORTS = {
    "RequestLogMiddleware": "request_log",
    "per_tool_tokens": "tax",
    "tool_tokens": "tax",
    "tools_json": "tax",
}

__all__ = ["RequestLogMiddleware", "per_tool_tokens", "tool_tokens", "tools_json"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
