"""Whether a request's tools are disclosed in the conversation (a native `disclosure=` mode):
what rewrites earlier turns must not run there."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attention_scoping.disclosure.anthropic import deferred
from attention_scoping.disclosure.base import mode_class

__all__ = ["history_mode"]


def history_mode(tools: Sequence[Any], messages: Sequence[Any]) -> str | None:
    """The native mode whose disclosures live in the conversation, if this request carries one:
    `"anthropic"` (deferred tools, `tool_reference` blocks in the history) or `"openai"`
    (namespaces or a `tool_search` tool, `tool_search_output` items); else None. What rewrites
    earlier turns (`history.TurnDigestMiddleware`) must not run there."""
    if any(deferred(t) for t in tools) or mode_class("anthropic")().disclosed(messages):
        return "anthropic"
    grouped = any(
        isinstance(t, Mapping) and t.get("type") in ("namespace", "tool_search") for t in tools
    )
    if grouped or mode_class("openai")().disclosed(messages):
        return "openai"
    return None
