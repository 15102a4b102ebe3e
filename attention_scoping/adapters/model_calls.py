"""`ModelCallHooks`: the sync and async model-call hooks written once, around two steps.

Many middlewares do something before the model call (narrow the tools, note what they are) and
something after it (rewrite the reply); LangChain asks for both a `wrap_model_call` and an
`awrap_model_call` that do the same. A subclass implements `prepare_request(request)` and/or
`finish_reply(request, response)`; this mixin supplies the two hooks around them.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.types import ExtendedModelResponse, ModelRequest, ModelResponse

from attention_scoping.adapters.hooks import AsyncModelHandler, ModelHandler

__all__ = ["ModelCallHooks", "Reply"]

Reply = ModelResponse[Any] | ExtendedModelResponse[Any]
"""What `finish_reply` passes on: the reply, or the reply with a state update (`Command`)."""


class ModelCallHooks:
    """Mixin (before `AgentMiddleware` in the bases): `wrap_model_call` and `awrap_model_call`
    as `finish_reply(request, handler(prepare_request(request)))`."""

    def prepare_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request the model gets (the given one unless a subclass changes it)."""
        return request

    def finish_reply(self, request: ModelRequest[Any], response: ModelResponse[Any]) -> Reply:
        """The reply passed on (the model's unless a subclass rewrites it or adds a state
        update); `request` is the one this middleware received."""
        return response

    def wrap_model_call(self, request: ModelRequest[Any], handler: ModelHandler[Any, Any]) -> Reply:
        """Call the model between `prepare_request` and `finish_reply`."""
        return self.finish_reply(request, handler(self.prepare_request(request)))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: AsyncModelHandler[Any, Any]
    ) -> Reply:
        """Async form of `wrap_model_call`."""
        return self.finish_reply(request, await handler(self.prepare_request(request)))
