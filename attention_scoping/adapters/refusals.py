"""Refused tool calls: the structured error message, its codes, and a hook pair that refuses.

Every gate of the package (scope, tool gate, approvals) answers a refused call the same way: a
`ToolMessage` with `status="error"` and a JSON body with `error`, `message` and `next_step`, and
the tool does not run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from attention_scoping.adapters.hygiene import invalid_call_refusal
from attention_scoping.core.errors import render_payload

ToolResult = ToolMessage | Command[Any]


def refusal_message(call: Mapping[str, Any], payload: dict[str, Any]) -> ToolMessage:
    """The error `ToolMessage` answering `call` with `payload` as its JSON body."""
    return ToolMessage(
        render_payload(payload), tool_call_id=call["id"], name=call["name"], status="error"
    )


class RefusesToolCalls:
    """Mixin for middleware whose tool-call hook is "refuse, or run": sync and async forms.

    Subclasses implement `review_tool_call(request) -> ToolMessage | None` (a refusal, or None
    to let the call run). A call whose arguments were not valid JSON (see `hygiene`) is refused
    before the review.
    """

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

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        """Run the call unless `review_tool_call` refuses it."""
        refusal = self._refusal(request)
        return refusal if refusal is not None else self.tool_result(request, handler(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async form of `wrap_tool_call`."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        return self.tool_result(request, await handler(request))
