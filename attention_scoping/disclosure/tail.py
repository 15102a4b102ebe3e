"""What the middlewares share in the native modes: the search tool, the disclosure pair at the
tail of a model response, the names disclosed this turn, and the refusal of an undisclosed call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import Any

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from attention_scoping.common.errors import ErrorCode, ErrorPayload, refusal
from attention_scoping.common.messages import DISCLOSURE_CALL_PREFIX, current_turn
from attention_scoping.disclosure.base import SEARCH_TOOL, Disclosure

SEARCH_DESCRIPTION = (
    "Search the tools that are not loaded yet and load the best matches for the next step. "
    "Describe the capability you need in a few words, or write a tool's exact name; the tools "
    "found can be called right after."
)


class SearchArgs(BaseModel):
    """Arguments of the search tool."""

    query: str = Field(description="What the tool you need does, or its exact name.")


def _never_run(query: str) -> str:
    """Placeholder body: the middleware that adds the search tool answers its calls itself."""
    msg = f"{SEARCH_TOOL} is answered by the disclosure middleware, not run"
    raise RuntimeError(msg)


def make_search_tool() -> BaseTool:
    """The client-side search tool (`SEARCH_TOOL`); the gate answers its calls in its tool hook,
    so the tool itself is only its schema (added to the request, not registered)."""
    return StructuredTool.from_function(
        _never_run, name=SEARCH_TOOL, description=SEARCH_DESCRIPTION, args_schema=SearchArgs
    )


def pair_id(messages: Sequence[Any], what: str) -> str:
    """A tool-call id for a disclosure pair: unique in the thread, valid for every provider."""
    digest = hashlib.sha256(f"{len(messages)}\x00{what}".encode()).hexdigest()[:12]
    return f"{DISCLOSURE_CALL_PREFIX}{digest}"


def missing(
    disclosure: Disclosure,
    messages: Sequence[Any],
    visible: Sequence[str],
    loaded: Collection[str],
) -> list[str]:
    """Names of `visible` the history has not disclosed and that are not loaded (in order)."""
    if not disclosure.in_history:
        return []
    disclosed = disclosure.disclosed(messages) or frozenset()
    return [n for n in visible if n not in loaded and n not in disclosed]


def turn_disclosed(disclosure: Disclosure, messages: Sequence[Any]) -> frozenset[str]:
    """Names disclosed since the last user message (the model's own searches and loads, and
    the pairs code added): they stay callable for the rest of the turn."""
    if not disclosure.in_history:
        return frozenset()
    start = max(current_turn(messages)[0], 0)
    return disclosure.disclosed(list(messages)[start:]) or frozenset()


def with_pair(response: Any, pair: Sequence[BaseMessage]) -> Any:
    """`response` with the disclosure `pair` in front of the model's reply, so the pair is
    written to state and every later request keeps it in its prefix."""
    if not pair:
        return response
    if isinstance(response, AIMessage):
        return ModelResponse(result=[*pair, response])
    if isinstance(response, ExtendedModelResponse):
        inner = with_pair(response.model_response, pair)
        return ExtendedModelResponse(model_response=inner, command=response.command)
    if isinstance(response, ModelResponse):
        return ModelResponse(
            result=[*pair, *response.result], structured_response=response.structured_response
        )
    return response


def on_wire(disclosure: Disclosure, request: Any) -> Any:
    """`request` with its messages as the provider carries them (`Disclosure.outgoing`)."""
    messages = disclosure.outgoing(request.messages)
    return request if messages == list(request.messages) else request.override(messages=messages)


def read_reply(disclosure: Disclosure, response: Any) -> Any:
    """The model's reply as the agent loop sees it (`Disclosure.incoming` on each message)."""
    if isinstance(response, AIMessage):
        return disclosure.incoming(response)
    if isinstance(response, ExtendedModelResponse):
        inner = read_reply(disclosure, response.model_response)
        return ExtendedModelResponse(model_response=inner, command=response.command)
    if isinstance(response, ModelResponse):
        return ModelResponse(
            result=[disclosure.incoming(m) for m in response.result],
            structured_response=response.structured_response,
        )
    return response


def undisclosed_payload(name: str, available: Sequence[str]) -> ErrorPayload:
    """Refusal of a call to a tool the conversation has not disclosed (never loaded)."""
    return refusal(
        ErrorCode.TOOL_NOT_AVAILABLE,
        f"{name!r} is not loaded in this conversation; it was not run.",
        tool=name,
        available=available,
        next_step=(
            f"Call one of the available tools, or load the tool first ({SEARCH_TOOL} or "
            "load_context), then call it."
        ),
    )
