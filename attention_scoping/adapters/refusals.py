"""Refused tool calls: the structured error message, its codes, and a hook pair that refuses.

Every gate of the package (scope, tool gate, approvals) answers a refused call the same way: a
`ToolMessage` with `status="error"` and a JSON body with `error`, `message` and `next_step`, and
the tool does not run. A call that runs has its result bounded (`bounded_result`, the one limit of
`core.limits`) before anything else sees it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from attention_scoping.adapters.hooks import AsyncToolHandler, ToolHandler, ToolResult
from attention_scoping.adapters.hygiene import invalid_call_refusal
from attention_scoping.common.errors import render_payload
from attention_scoping.common.limits import RESULT_MAX_CHARS, clip_content


def refusal_message(call: Mapping[str, Any], payload: Mapping[str, Any]) -> ToolMessage:
    """The error `ToolMessage` answering `call` with `payload` as its JSON body."""
    return ToolMessage(
        render_payload(payload), tool_call_id=call["id"], name=call["name"], status="error"
    )


def _bounded_message(message: Any, limit: int) -> Any:
    """`message` with its content clipped to `limit`, when it is a ToolMessage that needs it."""
    if not isinstance(message, ToolMessage):
        return message
    content = clip_content(message.content, limit)
    if content is message.content:
        return message
    return message.model_copy(update={"content": content})


def bounded_result(result: ToolResult, limit: int | None = RESULT_MAX_CHARS) -> ToolResult:
    """`result` with every tool message in it cut to `limit` characters (`core.limits.clip`:
    the cut marked, the full size reported); the same object when nothing is cut."""
    if limit is None:
        return result
    if isinstance(result, ToolMessage):
        return _bounded_message(result, limit)
    if not isinstance(result, Command):
        return result
    update = result.update
    if not isinstance(update, Mapping) or not isinstance(update.get("messages"), list):
        return result
    messages = [_bounded_message(m, limit) for m in update["messages"]]
    if all(new is old for new, old in zip(messages, update["messages"], strict=True)):
        return result
    merged = {**update, "messages": messages}
    return Command(graph=result.graph, update=merged, resume=result.resume, goto=result.goto)


class RefusesToolCalls:
    """Mixin for middleware whose tool-call hook is "refuse, or run": sync and async forms.

    Subclasses implement `review_tool_call(request) -> ToolMessage | None` (a refusal, or None
    to let the call run). A call whose arguments were not valid JSON (see `hygiene`) is refused
    before the review. The result of a call that ran is cut to `result_max_chars` (set it on
    the instance; None leaves results whole) before `tool_result` sees it.
    """

    result_max_chars: int | None = RESULT_MAX_CHARS
    """The bound of every tool result this middleware passes on (`core.limits.RESULT_MAX_CHARS`)."""

    def _refusal(self, request: ToolCallRequest) -> ToolMessage | None:
        invalid = invalid_call_refusal(request.tool_call)
        if invalid is not None:
            return refusal_message(request.tool_call, invalid)
        return self.review_tool_call(request)

    def review_tool_call(self, request: ToolCallRequest) -> ToolMessage | None:
        """A refusal for `request`, or None when the call may run."""
        raise NotImplementedError

    def tool_result(self, request: ToolCallRequest, result: ToolResult) -> ToolResult:
        """What the call answers once it ran (the tool's result unless a subclass adds to it)."""
        return result

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResult:
        """Run the call unless `review_tool_call` refuses it."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        return self.tool_result(request, bounded_result(handler(request), self.result_max_chars))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolResult:
        """Async form of `wrap_tool_call`."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        result = bounded_result(await handler(request), self.result_max_chars)
        return self.tool_result(request, result)
