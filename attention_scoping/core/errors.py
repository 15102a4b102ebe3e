"""The error codes a model can receive, their payload shape, and how payloads are rendered.

One `ErrorCode` enum for every structured refusal of the package (scope gate, tool gate, gateway,
manifests, intents, approvals), so a renamed code is a type error rather than a silent change of
behaviour in a module that compares strings. Payloads are JSON objects with `error`, `message` and
`next_step`; `render_payload` is the one place they are serialised.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, NotRequired, TypedDict


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
    message: str
    next_step: NotRequired[str]


Payload = dict[str, Any]
"""A tool payload (an `ErrorPayload` plus context fields, or a success breadcrumb)."""


def render_payload(payload: Payload) -> str:
    """Serialise a tool payload as compact JSON (the form models parse most reliably)."""
    return json.dumps(payload, ensure_ascii=False, separators=(", ", ": "))


def error_code(payload: object) -> str | None:
    """The `error` field of a parsed payload, or None when it is not an error payload."""
    if isinstance(payload, dict):
        code = payload.get("error")
        return code if isinstance(code, str) else None
    return None


__all__ = [
    "NOT_RUN_ERRORS",
    "ErrorCode",
    "ErrorPayload",
    "Payload",
    "error_code",
    "render_payload",
]
