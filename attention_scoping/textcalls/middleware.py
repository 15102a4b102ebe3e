"""`TextToolCallMiddleware`: turn a reply that is a tool call written as text into a real call."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence

from langchain.agents.middleware.types import ContextT, ResponseT
from langchain_core.messages import AIMessage, BaseMessage

from attention_scoping.adapters.replies import ReplyRewriteMiddleware, offered_tool_names
from attention_scoping.textcalls.context import decline_reason
from attention_scoping.textcalls.markup import keyed_call, strip_markup
from attention_scoping.textcalls.parse import ReplyCalls, TextCall, reply_calls

__all__ = [
    "TextToolCallMiddleware",
    "clean_markup",
    "convert_text_calls",
    "message_text",
    "offered_tool_names",
    "text_calls_to_run",
]


def message_text(message: AIMessage) -> str:
    """The text of a model reply (the text blocks of a list content joined)."""
    return message.text if isinstance(message.content, list) else str(message.content or "")


def _reply_calls(text: str) -> ReplyCalls | None:
    """The calls of a reply that is a call (`parse.reply_calls`), read again without template
    markup (`markup.strip_markup`) and in the keyed form (`name:` / `arguments:`) when the
    plain reading finds none; the lead-in kept as content loses its markup too."""
    found = reply_calls(text)
    if found is None:
        cleaned = strip_markup(text)
        found = reply_calls(cleaned) if cleaned is not text else None
        keyed = keyed_call(cleaned) if found is None else None
        found = ReplyCalls([keyed], "", "keyed") if keyed is not None else found
    if found is None:
        return None
    lead_in = strip_markup(found.lead_in)
    return found if lead_in is found.lead_in else ReplyCalls(found.calls, lead_in, found.source)


def text_calls_to_run(
    text: str, offered: Collection[str], thread: Sequence[BaseMessage] = ()
) -> tuple[list[TextCall], str, str | None]:
    """(the calls to run, the lead-in to keep as content, why nothing runs or None).

    Only a reply that *is* a call converts (`parse.reply_calls`), only its calls naming an
    offered tool, and none when the thread says otherwise (`context.decline_reason`: the user
    asked to see JSON or an example, or the call copies one from a tool result).
    """
    found = _reply_calls(text)
    if found is None:
        return [], "", "the reply is not a call"
    calls = [c for c in found.calls if c.name in offered]
    if not calls:
        return [], "", "the call names no offered tool"
    why = decline_reason(calls, thread)
    if why is not None:
        return [], "", why
    return calls, found.lead_in, None


def convert_text_calls(
    message: BaseMessage, offered: Collection[str], thread: Sequence[BaseMessage] = ()
) -> BaseMessage:
    """`message` with its text tool calls (naming an offered tool) as real `tool_calls`.

    A message that already has tool calls, or that is not a call (see `text_calls_to_run`), is
    returned unchanged; the converted message keeps the lead-in before the calls as content.
    `thread` is the conversation the reply answers (the request's messages), read for what the
    user asked and what tools returned; without it only the reply itself is judged.
    """
    if not isinstance(message, AIMessage) or message.tool_calls:
        return message
    calls, lead_in, _ = text_calls_to_run(message_text(message), offered, thread)
    if not calls:
        return clean_markup(message)
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
            "content": lead_in,
            "tool_calls": tool_calls,
            "invalid_tool_calls": [],
            "response_metadata": metadata,
        }
    )


def clean_markup(message: AIMessage) -> AIMessage:
    """A text reply without the template markup it copied (`markup.strip_markup`), so the next
    turn does not copy it again; the same message when it has none or is not plain text. The
    words between the tags stay; `response_metadata["markup_removed"]` marks the change."""
    if message.tool_calls or not isinstance(message.content, str):
        return message
    cleaned = strip_markup(message.content)
    if cleaned is message.content:
        return message
    metadata = {**message.response_metadata, "markup_removed": True}
    return message.model_copy(update={"content": cleaned, "response_metadata": metadata})


class TextToolCallMiddleware(ReplyRewriteMiddleware[ContextT, ResponseT]):
    """Convert a reply that is a tool call written as text into a real tool call (opt-in).

    Small local models (e.g. Qwen2.5-Coder under llama.cpp's server) often answer with a fenced
    ```` ```json {"name": ..., "arguments": ...} ``` ```` block, `<tool_call>` tags or bare JSON
    instead of `tool_calls`, so the agent stops without running anything. This middleware
    rewrites such a reply into a real tool call, **only when the reply is the call** (after at
    most a short lead-in, not presented as an example or a quote), **only for tools offered on
    that model call**, and not when the user's last message asks to see JSON or an example or
    forbids running, nor when the call copies one a tool returned. Converted calls are ordinary
    calls: approval (`HumanInTheLoopMiddleware`, `ApprovalMiddleware`) sees them. Put it last in
    the middleware list (innermost) so it sees the tools the other middleware left visible.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.textcalls import TextToolCallMiddleware

        agent = create_agent(local_model, tools=tools, middleware=[TextToolCallMiddleware()])
        ```
    """

    def rewrite(
        self, message: BaseMessage, offered: set[str], thread: Sequence[BaseMessage] = ()
    ) -> BaseMessage:
        """`message` with its text calls of offered tools as real tool calls."""
        return convert_text_calls(message, offered, thread)
