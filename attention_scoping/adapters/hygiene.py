"""Tool calls a provider will accept back: every call with a unique id and exactly one answer.

A model can emit tool calls the agent loop cannot answer as they are: two calls sharing one id
(LangGraph then rejects two updates in one step), a call without an id, or a call whose arguments
are not valid JSON (LangChain files it under `invalid_tool_calls`, which the loop never runs but
the provider still expects an answer to). `repair_response` fixes the model's message before it
enters state; `invalid_call_refusal` answers a repaired invalid call with a structured error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage

from attention_scoping.core.errors import ErrorCode

INVALID_ARGUMENTS_KEY = "__invalid_arguments__"
"""Argument key that marks a call whose arguments the model did not write as valid JSON."""

R = TypeVar("R")


def _converted(invalid: Mapping[str, Any]) -> dict[str, Any]:
    raw = invalid.get("args")
    return {
        "name": invalid.get("name") or "",
        "args": {
            INVALID_ARGUMENTS_KEY: {
                "raw": raw if isinstance(raw, str) else str(raw),
                "error": str(invalid.get("error") or "arguments are not a JSON object"),
            }
        },
        "id": invalid.get("id"),
        "type": "tool_call",
    }


def repair_message(message: AIMessage) -> AIMessage | None:
    """A copy of `message` whose calls all have unique ids and none is invalid, or None if fine."""
    calls = [dict(c) for c in message.tool_calls] + [
        _converted(c) for c in message.invalid_tool_calls
    ]
    changed = bool(message.invalid_tool_calls)
    seen: set[str] = set()
    for position, call in enumerate(calls):
        cid = call.get("id")
        if not isinstance(cid, str) or not cid or cid in seen:
            base = cid if isinstance(cid, str) and cid else "call"
            suffix = position
            while f"{base}_{suffix}" in seen:
                suffix += 1
            cid = f"{base}_{suffix}"
            call["id"] = cid
            changed = True
        seen.add(cid)
    if not changed:
        return None
    return message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})


def repair_response(response: R) -> R:
    """`response` (a ModelResponse, an AIMessage or an ExtendedModelResponse) with its last model
    message repaired; the same object when nothing needed repair."""
    if isinstance(response, AIMessage):
        fixed = repair_message(response)
        return response if fixed is None else fixed  # type: ignore[return-value]
    if isinstance(response, ExtendedModelResponse):
        inner = repair_response(response.model_response)
        if inner is response.model_response:
            return response
        return ExtendedModelResponse(model_response=inner, command=response.command)  # type: ignore[return-value]
    if isinstance(response, ModelResponse) and response.result:
        last = response.result[-1]
        if isinstance(last, AIMessage):
            fixed = repair_message(last)
            if fixed is not None:
                return ModelResponse(  # type: ignore[return-value]
                    result=[*response.result[:-1], fixed],
                    structured_response=response.structured_response,
                )
    return response


def invalid_call_refusal(call: Mapping[str, Any]) -> dict[str, Any] | None:
    """The error payload for a call repaired from invalid JSON arguments, else None."""
    args = call.get("args")
    if not isinstance(args, Mapping) or INVALID_ARGUMENTS_KEY not in args:
        return None
    detail = args[INVALID_ARGUMENTS_KEY]
    raw = detail.get("raw", "") if isinstance(detail, Mapping) else ""
    name = call.get("name") or "the tool"
    return {
        "error": ErrorCode.INVALID_ARGUMENTS,
        "tool": call.get("name") or "",
        "message": (
            f"{name} was not run: its arguments are not a valid JSON object "
            f"({str(raw)[:200]!r})."
        ),
        "next_step": f"Call {name} again with arguments written as one JSON object.",
    }
