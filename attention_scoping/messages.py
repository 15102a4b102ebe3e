"""Reading a chat history: the user's turn, their words, and the calls of one reply.

Messages added by the runtime itself (a nudge, a digest) carry `additional_kwargs["synthetic"]`
and never count as the user's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SYNTHETIC = "synthetic"
"""`additional_kwargs` key of a human message the runtime added (not the user's words)."""


def text_of(message: Any) -> str:
    """The text of a message: string content, or the text blocks of a list."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block if isinstance(block, str) else str(block.get("text", ""))
        for block in content
        if isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")
    ]
    return "".join(parts)


def is_user_turn(message: Any) -> bool:
    """Whether `message` is a real user message (not one the runtime added)."""
    extra = getattr(message, "additional_kwargs", None) or {}
    return getattr(message, "type", None) == "human" and not extra.get(SYNTHETIC)


def current_turn(messages: Sequence[Any]) -> tuple[int, str]:
    """(index, key) of the last real user message; the key (index and message id) names the
    turn in state records. (-1, "-1:") when there is none."""
    for index in range(len(messages) - 1, -1, -1):
        if is_user_turn(messages[index]):
            return index, f"{index}:{getattr(messages[index], 'id', None) or ''}"
    return -1, "-1:"


def turn_starts(messages: Sequence[Any]) -> bool:
    """Whether this is the first model call of a user turn (the last message is the user's)."""
    return bool(messages) and is_user_turn(messages[-1])


def user_text(messages: Sequence[Any]) -> str:
    """The text of the last real user message (never tool output): what the user asks now."""
    index = current_turn(messages)[0]
    return text_of(messages[index]) if index >= 0 else ""


def tool_calls_of(message: Any) -> list[dict[str, Any]]:
    """The tool calls of a model message (empty for other messages)."""
    if getattr(message, "type", None) != "ai":
        return []
    return [dict(call) for call in getattr(message, "tool_calls", None) or []]


def reply_with_call(messages: Sequence[Any], call_id: object) -> Any | None:
    """The model message that issued the call `call_id` (searched from the end), or None."""
    if not isinstance(call_id, str):
        return None
    for message in reversed(messages):
        if any(c.get("id") == call_id for c in tool_calls_of(message)):
            return message
    return None
