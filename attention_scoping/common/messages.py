"""Read a chat history without importing LangChain: the few message fields the decisions need.

LangChain messages carry `type` (`"human"`, `"ai"`, `"tool"`, `"system"`), `content`,
`additional_kwargs`, and `tool_calls` (AI) or `name`/`status` (tool). The pure decisions (the
tool gate, the scope gate) read them through these helpers, so they stay framework-free and can
be tested with plain objects.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class MessageLike(Protocol):
    """The part of a chat message the decisions read (a LangChain `BaseMessage` fits)."""

    @property
    def type(self) -> str:
        """`"human"`, `"ai"`, `"tool"` or `"system"`."""
        ...

    @property
    def content(self) -> Any:
        """A string, or a list of content blocks."""
        ...


def text_of(message: MessageLike) -> str:
    """The message's text: LangChain's `.text`, else string content or a list's text blocks."""
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return text
    content = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str)
            or (isinstance(block, Mapping) and block.get("type") == "text")
        ]
        return "".join(parts)
    return ""


OUTPUT_LIMIT_REASONS = frozenset({"length", "max_tokens", "MAX_TOKENS"})
"""Finish reasons of a reply cut at the output-token cap (OpenAI and llama.cpp `length`,
Anthropic `max_tokens`, Gemini `MAX_TOKENS`)."""


def hit_output_limit(message: object) -> bool:
    """Whether a model reply stopped at the output-token cap (`response_metadata`'s
    `finish_reason` or `stop_reason`): a reply cut mid-sentence, often one that repeats itself."""
    meta = getattr(message, "response_metadata", None)
    if not isinstance(meta, Mapping):
        return False
    return any(meta.get(key) in OUTPUT_LIMIT_REASONS for key in ("finish_reason", "stop_reason"))


def is_user_turn(message: MessageLike) -> bool:
    """A real user message (synthetic turns added by the runtime, such as nudges, do not count)."""
    extra = getattr(message, "additional_kwargs", None) or {}
    return message.type == "human" and not extra.get("synthetic")


def user_turn_starts(messages: Sequence[MessageLike]) -> list[int]:
    """Indices of the real user messages."""
    return [i for i, m in enumerate(messages) if is_user_turn(m)]


def current_turn(messages: Sequence[MessageLike]) -> tuple[int, str]:
    """(index, key) of the last real user message, where the user's turn starts; the key (its
    index and message id) names the turn in state records, (-1, "-1:") when there is none."""
    starts = user_turn_starts(messages)
    if not starts:
        return -1, "-1:"
    index = starts[-1]
    return index, f"{index}:{getattr(messages[index], 'id', None) or ''}"


def tool_calls_of(message: MessageLike) -> list[dict[str, Any]]:
    """The tool calls of a model message (empty for other messages)."""
    if message.type != "ai":
        return []
    return [dict(call) for call in getattr(message, "tool_calls", None) or []]


DISCLOSURE_CALL_PREFIX = "toolu_disclose_"
"""How the ids of the tool calls in a disclosure pair begin (`disclosure.tail.pair_id`): the
call-and-result pair a middleware adds when code discloses tools in a native mode."""


def is_disclosure_call(message: MessageLike) -> bool:
    """Whether `message` is the call half of a disclosure pair code added (not a model reply):
    its tool calls, or on the OpenAI Responses wire its `call_id` items (a `tool_search_call`
    and its output), all carry the pair's id prefix."""
    ids = [c.get("id") for c in tool_calls_of(message)]
    if not ids and message.type == "ai" and isinstance(message.content, list):
        ids = [b.get("call_id") for b in message.content if isinstance(b, dict)]
    return bool(ids) and all(str(i or "").startswith(DISCLOSURE_CALL_PREFIX) for i in ids)


def tool_error_code(message: MessageLike) -> str | None:
    """The `error` code of a tool result with `status="error"` and a JSON body, else None."""
    if message.type != "tool" or getattr(message, "status", None) != "error":
        return None
    content = message.content
    if not isinstance(content, str) or not content.startswith("{"):
        return None
    try:
        body = json.loads(content)
    except json.JSONDecodeError:
        return None
    code = body.get("error") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


def intent_text(messages: Sequence[MessageLike], turns: int = 1) -> str:
    """The user's intent: the text of the last `turns` user messages (never tool output)."""
    starts = user_turn_starts(messages)
    chosen = [text_of(messages[i]) for i in starts[-max(1, turns) :]]
    return "\n".join(t for t in chosen if t.strip())
