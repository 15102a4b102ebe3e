"""`TextToolCallMiddleware`: turn tool calls a model wrote as text into real tool calls."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from langchain.agents.middleware.types import ContextT, ResponseT
from langchain_core.messages import AIMessage, BaseMessage

from attention_scoping.adapters.replies import ReplyRewriteMiddleware, offered_tool_names
from attention_scoping.textcalls.parse import offered_calls, strip_calls

__all__ = [
    "TextToolCallMiddleware",
    "convert_text_calls",
    "message_text",
    "offered_tool_names",
]


def message_text(message: AIMessage) -> str:
    """The text of a model reply (the text blocks of a list content joined)."""
    return message.text if isinstance(message.content, list) else str(message.content or "")


def convert_text_calls(message: BaseMessage, offered: Collection[str]) -> BaseMessage:
    """`message` with its text tool calls (naming an offered tool) as real `tool_calls`.

    A message that already has tool calls, or whose text calls name no offered tool, is
    returned unchanged; the converted message keeps any prose around the calls as content.
    """
    if not isinstance(message, AIMessage) or message.tool_calls:
        return message
    text = message_text(message)
    calls, _ = offered_calls(text, offered)
    if not calls:
        return message
    tool_calls = [
        {
            "name": c.name,
            "args": c.arguments,
            "id": f"call_text_{uuid.uuid4().hex[:12]}",
            "type": "tool_call",
        }
        for c in calls
    ]
    metadata = {**message.response_metadata, "text_tool_calls": len(calls)}
    return message.model_copy(
        update={
            "content": "" if all(c.source == "bare" for c in calls) else strip_calls(text),
            "tool_calls": tool_calls,
            "invalid_tool_calls": [],
            "response_metadata": metadata,
        }
    )


class TextToolCallMiddleware(ReplyRewriteMiddleware[ContextT, ResponseT]):
    """Convert tool calls written in the model's text into real tool calls (opt-in).

    Small local models (e.g. Qwen2.5-Coder under llama.cpp's server) often answer with a fenced
    ```` ```json {"name": ..., "arguments": ...} ``` ```` block, `<tool_call>` tags or bare JSON
    instead of `tool_calls`, so the agent stops without running anything. This middleware
    rewrites such a reply into a real tool call, **only when the name is one of the tools
    offered on that model call**; any other text is left alone. Put it last in the middleware
    list (innermost) so it sees the tools the other middleware left visible.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.textcalls import TextToolCallMiddleware

        agent = create_agent(local_model, tools=tools, middleware=[TextToolCallMiddleware()])
        ```
    """

    def rewrite(self, message: BaseMessage, offered: set[str]) -> BaseMessage:
        """`message` with its text calls of offered tools as real tool calls."""
        return convert_text_calls(message, offered)
