"""The handler and result types of LangChain's `wrap_*` hooks, named once for every middleware
(the hook signatures read the same in each, without spelling the `Callable` out)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware.types import (
    ContextT,
    ModelRequest,
    ModelResponse,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import ToolMessage
from langgraph.types import Command

__all__ = ["AsyncModelHandler", "AsyncToolHandler", "ModelHandler", "ToolHandler", "ToolResult"]

ToolResult = ToolMessage | Command[Any]
"""What a tool call's handler (and so `wrap_tool_call`) returns."""
ToolHandler = Callable[[ToolCallRequest], ToolResult]
"""The `handler` of `wrap_tool_call`."""
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolResult]]
"""The `handler` of `awrap_tool_call`."""
ModelHandler = Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]]
"""The `handler` of `wrap_model_call` (generic in the context and response types)."""
AsyncModelHandler = Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]]
"""The `handler` of `awrap_model_call`."""
