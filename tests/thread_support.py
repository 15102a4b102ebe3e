"""What a thread must hold for a provider to accept its next request."""

from __future__ import annotations

from collections import Counter

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage


def assert_thread_valid(messages: list[BaseMessage]) -> None:
    """Every tool call has a unique id and exactly one answer; no answer is orphaned."""
    asked: list[str] = []
    for message in messages:
        if isinstance(message, AIMessage):
            assert not message.invalid_tool_calls
            asked += [str(c["id"]) for c in message.tool_calls]
    assert len(asked) == len(set(asked)), asked
    answered = Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))
    assert dict(answered) == dict.fromkeys(asked, 1)
