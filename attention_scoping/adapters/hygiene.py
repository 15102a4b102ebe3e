"""Tool calls a provider will accept back: every call with a unique id and exactly one answer.

A model can emit tool calls the agent loop cannot answer as they are: two calls sharing one id
(LangGraph then rejects two updates in one step), a call without an id, or a call whose arguments
are not valid JSON (LangChain files it under `invalid_tool_calls`, which the loop never runs but
the provider still expects an answer to). `repair_response` fixes the model's message before it
enters state; `invalid_call_refusal` answers a repaired invalid call with a structured error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage

from attention_scoping.gate import (
    INVALID_ARGUMENTS_KEY,
    MAX_ARGUMENT_DEPTH,
    MAX_ARGUMENT_ITEMS,
    invalid_arguments_payload,
    repaired,
    thread_call_ids,
)

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "MAX_ARGUMENT_DEPTH",
    "MAX_ARGUMENT_ITEMS",
    "invalid_call_refusal",
    "repair_message",
    "repair_response",
    "thread_call_ids",
]

R = TypeVar("R")


def repair_message(message: AIMessage, taken: Iterable[str] = ()) -> AIMessage | None:
    """A copy of `message` whose calls all have ids unique in the thread (`taken` holds the ids
    already used) and none is invalid, or None when it needs no repair (the core's `repaired`)."""
    fixed = repaired(message, taken)
    return None if fixed is message else fixed


def repair_response(response: R, taken: Iterable[str] = ()) -> R:
    """`response` (a ModelResponse, an AIMessage or an ExtendedModelResponse) with its last model
    message repaired (ids in `taken` count as used); the same object when nothing needed it."""
    taken = set(taken)
    if isinstance(response, AIMessage):
        fixed = repair_message(response, taken)
        return response if fixed is None else fixed  # type: ignore[return-value]
    if isinstance(response, ExtendedModelResponse):
        inner = repair_response(response.model_response, taken)
        if inner is response.model_response:
            return response
        return ExtendedModelResponse(model_response=inner, command=response.command)  # type: ignore[return-value]
    if isinstance(response, ModelResponse) and response.result:
        last = response.result[-1]
        if isinstance(last, AIMessage):
            fixed = repair_message(last, taken)
            if fixed is not None:
                return ModelResponse(  # type: ignore[return-value]
                    result=[*response.result[:-1], fixed],
                    structured_response=response.structured_response,
                )
    return response


def invalid_call_refusal(call: Mapping[str, Any]) -> dict[str, Any] | None:
    """The error payload for a call repaired from invalid JSON arguments, else None (the
    core's `invalid_arguments_payload`)."""
    return invalid_arguments_payload(call)
