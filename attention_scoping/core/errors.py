"""The error codes a model can receive, their payload shape, and how payloads are rendered.

One `ErrorCode` enum for every structured refusal of the package (scope gate, tool gate, gateway,
manifests, intents, approvals), so a renamed code is a type error rather than a silent change of
behaviour in a module that compares strings. Payloads are JSON objects with `error`, `message` and
`next_step`; `render_payload` is the one place they are serialised.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, NotRequired, TypedDict, cast


class ErrorCode(StrEnum):
    """Every `error` value a tool result of this package can carry."""

    # scoping (load_context and the scope gate)
    UNKNOWN_CONTEXT = "unknown_context"
    ONE_CONTEXT_PER_STEP = "one_context_per_step"
    CONTEXT_SWITCHED_IN_SAME_STEP = "context_switched_in_same_step"
    TOOL_NOT_IN_CONTEXT = "tool_not_in_context"
    UNKNOWN_TOOL = "unknown_tool"
    # the runtime (attention_scoping.hesitation.repeats)
    REPEATED_CALL = "repeated_call"
    """The same tool with the same arguments already answered in this turn; not run again."""
    # the tool gate
    TOOL_NOT_AVAILABLE = "tool_not_available"
    PRECONDITION_FAILED = "precondition_failed"
    # the gateway
    UNAUTHORIZED = "unauthorized"
    INVALID_ARGUMENTS = "invalid_arguments"
    TOOL_FAILED = "tool_failed"
    RESULT_TOO_LARGE = "result_too_large"
    """The tool ran, but its result breaks the gateway's size or depth limits."""
    # manifests and two-phase intents
    UNKNOWN_NAMESPACE = "unknown_namespace"
    TOOL_NOT_IN_MANIFEST = "tool_not_in_manifest"
    WRITE_NOT_GUARDED = "write_not_guarded"
    UNRESOLVED_INTENT = "unresolved_intent"
    DUPLICATE_INTENT = "duplicate_intent"
    PREFLIGHT_REFUSED = "preflight_refused"
    INTENT_REFUSED = "intent_refused"
    OUTCOME_UNKNOWN = "outcome_unknown"
    NOT_APPLIED = "not_applied"
    MUTATION_FAILED = "mutation_failed"
    ASYNC_TOOL_IN_SYNC_RUN = "async_tool_in_sync_run"
    # approvals
    REJECTED_BY_USER = "rejected_by_user"
    APPROVAL_REFUSED = "approval_refused"
    # MCP servers (attention_scoping.mcp)
    SERVER_UNAVAILABLE = "server_unavailable"
    SERVER_CRASHED = "server_crashed"
    TIMEOUT = "timeout"
    MALFORMED_RESULT = "malformed_result"
    SERVER_ERROR = "server_error"
    TOOL_ERROR = "tool_error"
    TOOL_WITHDRAWN = "tool_withdrawn"

    @classmethod
    def confirmation(cls, reason: str) -> str:
        """The code of a refused confirmation code or token: `confirmation_<reason>`."""
        return f"confirmation_{reason}"


NOT_RUN_ERRORS = frozenset(
    {
        ErrorCode.TOOL_NOT_IN_CONTEXT,
        ErrorCode.CONTEXT_SWITCHED_IN_SAME_STEP,
        ErrorCode.UNKNOWN_TOOL,
        ErrorCode.UNKNOWN_CONTEXT,
        ErrorCode.ONE_CONTEXT_PER_STEP,
        ErrorCode.TOOL_NOT_AVAILABLE,
        ErrorCode.PRECONDITION_FAILED,
        ErrorCode.REPEATED_CALL,
    }
)
"""Codes of the scope gate, the tool gate and the repeat guard: refused, and nothing ran."""


class ErrorPayload(TypedDict):
    """The fields every error payload carries; each code adds its own context fields."""

    error: str
    tool: NotRequired[str]
    message: str
    available_tools: NotRequired[list[str]]
    """The tools the model may call now (`AVAILABLE_TOOLS`): the one key every gate uses."""
    next_step: NotRequired[str]


AVAILABLE_TOOLS = "available_tools"
"""The key of a refusal that lists the tools the model may call instead (every gate's)."""


def refusal(
    code: str,
    message: str,
    *,
    tool: str | None = None,
    available: Iterable[str] | None = None,
    next_step: str | None = None,
    **context: Any,
) -> ErrorPayload:
    """The one builder of a refusal payload: `error`, `tool`, `message`, the code's own
    `context` fields, `available_tools` and `next_step`, in that order (each only when given)."""
    payload: dict[str, Any] = {"error": code}
    if tool is not None:
        payload["tool"] = tool
    payload["message"] = message
    payload.update(context)
    if available is not None:
        payload[AVAILABLE_TOOLS] = list(available)
    if next_step is not None:
        payload["next_step"] = next_step
    return cast(ErrorPayload, payload)


def unknown_tool(
    name: str,
    next_step: str,
    *,
    available: Iterable[str] | None = None,
    where: str = "",
    hint: str = "",
    **context: Any,
) -> ErrorPayload:
    """The `unknown_tool` refusal of every gate: "There is no tool named 'x'{where}{hint};
    nothing was run." (`where`: " in ...", `hint`: `core.text.did_you_mean_hint`)."""
    message = f"There is no tool named {name!r}{where}{hint}; nothing was run."
    return refusal(
        ErrorCode.UNKNOWN_TOOL,
        message,
        tool=name,
        available=available,
        next_step=next_step,
        **context,
    )


Payload = dict[str, Any]
"""A tool payload (an `ErrorPayload` plus context fields, or a success breadcrumb)."""


def render_payload(payload: Mapping[str, Any]) -> str:
    """Serialise a tool payload as compact JSON (the form models parse most reliably)."""
    return json.dumps(payload, ensure_ascii=False, separators=(", ", ": "))


def error_code(payload: object) -> str | None:
    """The `error` field of a parsed payload, or None when it is not an error payload."""
    if isinstance(payload, dict):
        code = payload.get("error")
        return code if isinstance(code, str) else None
    return None


__all__ = [
    "AVAILABLE_TOOLS",
    "NOT_RUN_ERRORS",
    "ErrorCode",
    "ErrorPayload",
    "Payload",
    "error_code",
    "refusal",
    "render_payload",
    "unknown_tool",
]
