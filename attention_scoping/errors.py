"""Errors: one root for every exception the package raises, and one shape for every refusal the
model gets.

Configuration mistakes raise at construction (`ScopeConfigError`, naming the bad value and the
valid ones). Model mistakes never raise: they become a `ToolMessage` with `status="error"` whose
JSON body (`refusal`) says what was wrong and what to do next, and the tool does not run.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any


class AttentionScopingError(Exception):
    """The root of every exception this package raises."""


class ScopeConfigError(AttentionScopingError, ValueError):
    """A configuration names something that does not exist, gives it twice, or has a bad value."""


class UnknownScopeError(AttentionScopingError, ValueError):
    """State names an `active_context` that is not a configured scope."""


class StateSchemaError(AttentionScopingError, ValueError):
    """A hand-built graph's state cannot hold what the middleware writes or the gate reads."""


class ErrorCode(StrEnum):
    """Every `error` value a refused or failed tool call of this package can carry."""

    # the core: load_context and the enforced gate
    UNKNOWN_CONTEXT = "unknown_context"
    ONE_CONTEXT_PER_STEP = "one_context_per_step"
    CONTEXT_SWITCHED_IN_SAME_STEP = "context_switched_in_same_step"
    TOOL_NOT_IN_CONTEXT = "tool_not_in_context"
    UNKNOWN_TOOL = "unknown_tool"
    NOT_SHOWN = "not_shown"
    """No record says the model was shown this tool with the reply that called it."""
    INVALID_ARGUMENTS = "invalid_arguments"
    # add-ons
    REPEATED_CALL = "repeated_call"
    TOOL_NOT_AVAILABLE = "tool_not_available"
    PRECONDITION_FAILED = "precondition_failed"
    UNAUTHORIZED = "unauthorized"
    TOOL_FAILED = "tool_failed"
    RESULT_TOO_LARGE = "result_too_large"
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
    REJECTED_BY_USER = "rejected_by_user"
    APPROVAL_REFUSED = "approval_refused"
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
        ErrorCode.NOT_SHOWN,
        ErrorCode.INVALID_ARGUMENTS,
        ErrorCode.TOOL_NOT_AVAILABLE,
        ErrorCode.PRECONDITION_FAILED,
        ErrorCode.REPEATED_CALL,
    }
)
"""Codes of refusals: the call was refused and nothing ran."""

AVAILABLE_TOOLS = "available_tools"
"""The key of a refusal that lists the tools the model may call instead (every gate's)."""

Payload = dict[str, Any]
"""A tool payload: a refusal, or a success breadcrumb such as `load_context`'s."""


def refusal(
    code: str,
    message: str,
    *,
    tool: str | None = None,
    available: Iterable[str] | None = None,
    next_step: str | None = None,
    **context: Any,
) -> Payload:
    """The one builder of a refusal: `error`, `tool`, `message`, the code's own `context`
    fields, `available_tools` and `next_step`, in that order (each only when given)."""
    payload: Payload = {"error": str(code)}
    if tool is not None:
        payload["tool"] = tool
    payload["message"] = message
    payload.update(context)
    if available is not None:
        payload[AVAILABLE_TOOLS] = list(available)
    if next_step is not None:
        payload["next_step"] = next_step
    return payload


def render_payload(payload: Mapping[str, Any]) -> str:
    """A payload as compact JSON (the form models parse most reliably)."""
    return json.dumps(payload, ensure_ascii=False, separators=(", ", ": "))


def error_code(payload: object) -> str | None:
    """The `error` field of a parsed payload, or None when it is not a refusal."""
    code = payload.get("error") if isinstance(payload, dict) else None
    return code if isinstance(code, str) else None


def did_you_mean(value: str, valid: Iterable[str], *, limit: int = 3) -> str:
    """A ' (did you mean 'x'?)' hint naming the closest of `valid`, or ''."""
    close = difflib.get_close_matches(str(value)[:200], list(valid), n=limit, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def listing(values: Iterable[object], limit: int = 40) -> str:
    """`values` as a sorted, bounded, comma-separated list of reprs for an error message."""
    shown = sorted(repr(v) for v in values)
    more = len(shown) - limit
    text = ", ".join(shown[:limit])
    return f"{text} and {more} more" if more > 0 else (text or "none")


def check_choice(option: str, value: object, choices: Iterable[str]) -> None:
    """Raise `ScopeConfigError` when `value` is not one of `choices`, naming the valid ones."""
    valid = tuple(choices)
    if not isinstance(value, str) or value not in valid:
        hint = did_you_mean(value, valid) if isinstance(value, str) else ""
        msg = f"{option}={value!r} is not valid{hint}; valid: {', '.join(map(repr, valid))}"
        raise ScopeConfigError(msg)
