"""`ReplyRewriteMiddleware`: the shared shape of middleware that rewrite the model's reply.

Subclasses implement `rewrite(message, offered, thread)`; the base calls the model, applies the
call hygiene of `hygiene.repair_response` (unique ids, invalid-JSON arguments turned into calls
that are answered with a structured error), hands each message of the reply with the names of
the tools offered on that call and the request's messages, and returns the reply unchanged (the
same object) when nothing changed. Text tool calls (`textcalls`) and gateway routing
(`gateway.routing`) are built on it, so a stack of either alone is as clean as scoping's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ModelRequest,
    ModelResponse,
    ResponseT,
)
from langchain_core.messages import BaseMessage
from typing_extensions import override

from attention_scoping.adapters.hygiene import repair_response, thread_call_ids
from attention_scoping.adapters.model_calls import ModelCallHooks
from attention_scoping.adapters.refusals import RefusesToolCalls
from attention_scoping.adapters.tools import tool_name

__all__ = ["ReplyRewriteMiddleware", "offered_tool_names"]


def offered_tool_names(tools: list[Any]) -> set[str]:
    """Names of the tools of a model request (LangChain tools or provider dicts)."""
    return {tool_name(tool) for tool in tools}


class ReplyRewriteMiddleware(
    ModelCallHooks, RefusesToolCalls, AgentMiddleware[Any, ContextT, ResponseT]
):
    """Base of middleware that rewrite the messages of the model's reply (put them innermost,
    so outer middleware see the rewritten reply). The reply is repaired first (`hygiene`), and
    a call repaired from invalid JSON arguments is answered with a structured error."""

    def __init__(self, *, name: str | None = None) -> None:
        """`name`: middleware name, to use two instances in one agent."""
        super().__init__()
        self._name = name

    @property
    def name(self) -> str:
        """The middleware's node-name prefix."""
        return self._name or type(self).__name__

    def rewrite(
        self, message: BaseMessage, offered: set[str], thread: Sequence[BaseMessage] = ()
    ) -> BaseMessage:
        """One message of the reply, rewritten (or returned as is); `thread` holds the
        request's messages."""
        raise NotImplementedError

    def review_tool_call(self, request: Any) -> None:
        """Nothing to refuse beyond the invalid calls the base answers."""
        return None

    @override
    def finish_reply(
        self, request: ModelRequest[Any], response: ModelResponse[Any]
    ) -> ModelResponse[Any]:
        """The reply with call hygiene applied and each message `rewrite`n."""
        response = repair_response(response, thread_call_ids(request.messages))
        offered = offered_tool_names(list(request.tools))
        thread = list(request.messages)
        result = [self.rewrite(m, offered, thread) for m in response.result]
        if all(a is b for a, b in zip(result, response.result, strict=True)):
            return response
        return ModelResponse(result=result, structured_response=response.structured_response)
