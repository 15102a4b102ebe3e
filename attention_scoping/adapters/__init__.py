"""Shared LangChain glue: tools of every accepted shape (`tools`), the one way a gate refuses a
tool call (`refusals`), the sync and async model-call hooks written once (`model_calls`), the
base of middleware that rewrite the model's reply (`replies`), and the state keys a middleware
writes, checked against a hand-built graph's state (`state`). Feature packages build their
middleware on these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.adapters.model_calls import ModelCallHooks
    from attention_scoping.adapters.refusals import RefusesToolCalls, ToolResult, refusal_message
    from attention_scoping.adapters.replies import ReplyRewriteMiddleware, offered_tool_names
    from attention_scoping.adapters.tools import (
        ToolLike,
        as_base_tool,
        needs_approval,
        spec_from_tool,
        specs_from_tools,
        to_provider_schema,
        tool_metadata,
        tool_name,
    )

_EXPORTS = {
    "ModelCallHooks": "model_calls",
    "as_base_tool": "tools",
    "needs_approval": "tools",
    "offered_tool_names": "replies",
    "refusal_message": "refusals",
    "RefusesToolCalls": "refusals",
    "ReplyRewriteMiddleware": "replies",
    "spec_from_tool": "tools",
    "specs_from_tools": "tools",
    "to_provider_schema": "tools",
    "tool_metadata": "tools",
    "tool_name": "tools",
    "ToolLike": "tools",
    "ToolResult": "refusals",
}

__all__ = [
    "ModelCallHooks",
    "RefusesToolCalls",
    "ReplyRewriteMiddleware",
    "ToolLike",
    "ToolResult",
    "as_base_tool",
    "needs_approval",
    "offered_tool_names",
    "refusal_message",
    "spec_from_tool",
    "specs_from_tools",
    "to_provider_schema",
    "tool_metadata",
    "tool_name",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
