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

from attention_scoping.common.errors import ErrorCode, refusal
from attention_scoping.common.limits import shorten

INVALID_ARGUMENTS_KEY = "__invalid_arguments__"
"""Argument key that marks a call whose arguments the model did not write as valid JSON."""

MAX_ARGUMENT_DEPTH = 64
"""Deepest nesting of a call's arguments passed on to a tool; deeper is refused (no tool schema
needs more, and recursive validators and serialisers stop near 1,000 levels)."""

MAX_ARGUMENT_ITEMS = 20_000
"""Most values (containers and leaves) in a call's arguments passed on to a tool."""

R = TypeVar("R")


def _oversized(args: Any) -> str | None:
    """Why `args` is too deep or too large to pass on (checked without recursion), or None."""
    stack: list[tuple[Any, int]] = [(args, 1)]
    items = 0
    while stack:
        value, depth = stack.pop()
        items += 1
        if depth > MAX_ARGUMENT_DEPTH:
            return f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels"
        if items > MAX_ARGUMENT_ITEMS:
            return f"arguments hold more than {MAX_ARGUMENT_ITEMS} values"
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list | tuple):
            stack.extend((v, depth + 1) for v in value)
    return None


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


def thread_call_ids(messages: Iterable[Any]) -> set[str]:
    """The tool-call ids already used in a thread (a provider wants them unique in a request)."""
    taken: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            taken.update(str(c["id"]) for c in message.tool_calls if isinstance(c.get("id"), str))
    return taken


def repair_message(message: AIMessage, taken: Iterable[str] = ()) -> AIMessage | None:
    """A copy of `message` whose calls all have ids unique in the thread (`taken` holds the ids
    already used) and none is invalid, or None when it needs no repair."""
    calls = [dict(c) for c in message.tool_calls] + [
        _converted(c) for c in message.invalid_tool_calls
    ]
    changed = bool(message.invalid_tool_calls)
    seen: set[str] = set(taken)
    for position, call in enumerate(calls):
        problem = _oversized(call.get("args"))
        if problem is not None:
            call["args"] = {INVALID_ARGUMENTS_KEY: {"raw": "", "error": problem}}
            changed = True
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
    """The error payload for a call repaired from invalid JSON arguments, else None."""
    args = call.get("args")
    if not isinstance(args, Mapping) or INVALID_ARGUMENTS_KEY not in args:
        return None
    detail = args[INVALID_ARGUMENTS_KEY]
    raw = detail.get("raw", "") if isinstance(detail, Mapping) else ""
    error = detail.get("error", "") if isinstance(detail, Mapping) else ""
    name = call.get("name") or "the tool"
    shown = f"({shorten(str(raw))!r})" if raw else f"({shorten(str(error))})"
    return dict(
        refusal(
            ErrorCode.INVALID_ARGUMENTS,
            f"{name} was not run: its arguments are not a valid JSON object {shown}.",
            tool=call.get("name") or "",
            next_step=f"Call {name} again with arguments written as one JSON object.",
        )
    )
