"""A model request rendered byte-stably, as providers receive it: the one rendering that
`RequestLogMiddleware` writes and the lab's billing reads (equal bytes, equal cache prefixes).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

__all__ = ["as_provider_message", "stable_json"]


def stable_json(value: Any) -> str:
    """Byte-stable JSON: sorted keys, no whitespace, UTF-8 kept (the same value gives the same
    bytes on every call, so a provider's prefix cache can match it)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def as_provider_message(message: BaseMessage) -> dict[str, Any]:
    """A message as a provider-neutral mapping (role, content, tool calls), byte-stable."""
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": message.text}
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": message.text,
            **({"is_error": True} if message.status == "error" else {}),
        }
    out: dict[str, Any] = {"role": "assistant", "content": message.text}
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        out["tool_calls"] = [
            {"id": c["id"], "name": c["name"], "arguments": stable_json(c["args"])} for c in calls
        ]
    return out
