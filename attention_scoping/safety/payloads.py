"""What the model reads back from manifest tools: structured JSON with an exact `next_step`.

Every refusal names what was wrong (the field, the code, the earlier run) and the one call that
moves forward, so a model repairs the call instead of guessing or asking the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attention_scoping.common.errors import ErrorCode, ErrorPayload, refusal
from attention_scoping.common.text import did_you_mean_hint
from attention_scoping.safety.errors import ArgumentError, UnknownToolError
from attention_scoping.safety.intents import (
    DuplicateIntentError,
    Outcome,
    PreflightError,
    Proposal,
    UnresolvedIntentError,
)
from attention_scoping.safety.records import IntentRecord, IntentStatus
from attention_scoping.safety.tokens import TokenError

__all__ = [
    "CONFIRMATION_FIELD",
    "confirmation_error",
    "duplicate_intent",
    "invalid_arguments",
    "not_in_manifests",
    "outcome",
    "preflight_refused",
    "proposal",
    "record_summary",
    "unknown_tool",
    "write_not_guarded",
]

CONFIRMATION_FIELD = "confirmation_code"
"""The argument a write tool takes in phase 2 (absent in phase 1)."""


def _retry_hint(tool: str) -> str:
    return f"call {tool} again without {CONFIRMATION_FIELD} to get a fresh preview and code"


EXACT_NAME_STEP = "Call one of the available tools with its exact name."
"""`unknown_tool`, `unknown_namespace`, `tool_not_in_manifest`: what the model does next."""


def unknown_tool(error: UnknownToolError) -> ErrorPayload:
    """A call to a namespace or tool the bound manifests do not own."""
    return refusal(
        error.reason,
        f"{error}; nothing was run.",
        tool=error.name,
        available=error.available,
        next_step=EXACT_NAME_STEP,
    )


def not_in_manifests(tool: str, available: Sequence[str]) -> ErrorPayload:
    """A call to a tool outside the manifests this agent is bound to."""
    hint = did_you_mean_hint(tool, available)
    return refusal(
        ErrorCode.TOOL_NOT_IN_MANIFEST,
        f"{tool!r} is not a tool of this agent's manifests{hint}; it was not run.",
        tool=tool,
        available=available,
        next_step=EXACT_NAME_STEP,
    )


def invalid_arguments(error: ArgumentError) -> dict[str, Any]:
    """Arguments that break the schema; names the field and how to fix it."""
    head = error.problems[0]
    where = head.path or "the arguments"
    return {
        "error": ErrorCode.INVALID_ARGUMENTS,
        "tool": error.tool,
        "field": head.field,
        "path": head.path,
        "message": head.message,
        "problems": [p.as_dict() for p in error.problems],
        "next_step": (
            f"Call {error.tool} again with {where!r} fixed as the message says; keep the other "
            "arguments unchanged."
        ),
    }


def write_not_guarded(tool: str) -> dict[str, Any]:
    """A write tool run without a guard: refused, by design."""
    return {
        "error": ErrorCode.WRITE_NOT_GUARDED,
        "tool": tool,
        "message": (
            f"{tool} changes the world and runs only through two-phase confirmation; this "
            "agent has no ManifestMiddleware(guard=...) in front of it. Nothing was run."
        ),
        "next_step": "Tell the user this change cannot be made from here.",
    }


def proposal(tool: str, result: Proposal, now: float) -> dict[str, Any]:
    """Phase 1's answer: the preview and the code that confirms exactly this call."""
    body: dict[str, Any] = {
        "status": "confirmation_required",
        "tool": tool,
        "intent_sha256": result.intent_hash,
        "preview": result.preview,
        CONFIRMATION_FIELD: result.code,
        "expires_in_s": max(0, round(result.expires_at - now)),
        "message": "Nothing has changed yet: this is the preview of the change.",
        "next_step": (
            f"If the preview matches the request, call {tool} again with exactly the same "
            f"arguments plus {CONFIRMATION_FIELD}={result.code!r}. Do not ask the user to "
            "confirm; changing any argument needs a new preview."
        ),
    }
    if result.superseded:
        body["note"] = "An earlier preview of this same call was replaced; its code is void."
    return body


def confirmation_error(tool: str, error: TokenError) -> dict[str, Any]:
    """A phase-2 code that does not confirm this exact call."""
    steps = {
        "intent_mismatch": (
            f"The arguments differ from the previewed call. To make this changed call, "
            f"{_retry_hint(tool)}; otherwise resend the previewed arguments unchanged."
        ),
        "replayed": (
            "That code was already used: the change it confirmed has run or was refused. "
            "Do not repeat it; report the earlier result."
        ),
        "revoked": "A newer preview replaced that code; use the code of the newest preview.",
    }
    return {
        "error": ErrorCode.confirmation(error.reason),
        "tool": tool,
        "message": f"{error}. Nothing was run.",
        "next_step": steps.get(
            error.reason, f"Use the exact code from the preview, or {_retry_hint(tool)}."
        ),
    }


def record_summary(record: IntentRecord) -> dict[str, Any]:
    """The public facts of an intent record (for payloads and artifacts)."""
    return {
        "intent_id": record.intent_id,
        "status": record.status.value,
        "intent_sha256": record.intent_hash,
        "result_sha256": record.result_sha256,
        "affected_ids": list(record.affected_ids),
        "reconciled": record.reconciled,
        "updated_at": record.updated_at,
    }


def duplicate_intent(tool: str, error: DuplicateIntentError) -> dict[str, Any]:
    """The identical change ran recently, or is unsettled: refused, never repeated."""
    if isinstance(error, UnresolvedIntentError):
        return {
            "error": ErrorCode.UNRESOLVED_INTENT,
            "tool": tool,
            "message": f"{error}. Nothing was run.",
            "previous": record_summary(error.existing),
            "next_step": (
                "Do not retry: the earlier attempt may have applied the change. Tell the user "
                "it is being reconciled."
            ),
        }
    return {
        "error": ErrorCode.DUPLICATE_INTENT,
        "tool": tool,
        "message": f"{error}. Nothing was run.",
        "previous": record_summary(error.existing),
        "next_step": "Do not repeat the change; tell the user it was already done.",
    }


def preflight_refused(tool: str, error: PreflightError) -> dict[str, Any]:
    """The dry run refused the call (not permitted, missing target, no-op...)."""
    body: dict[str, Any] = {
        "error": ErrorCode.PREFLIGHT_REFUSED,
        "tool": tool,
        "message": f"{error}. Nothing was run.",
        "next_step": (
            f"Fix {error.field!r} and call {tool} again."
            if error.field
            else "Do not retry the same call; report the reason to the user."
        ),
    }
    if error.field:
        body["field"] = error.field
    return body


def outcome(tool: str, result: Outcome) -> tuple[dict[str, Any], bool]:
    """Phase 2's answer and whether it is an error (the model must see unknowns as errors)."""
    record = result.record
    summary = {k: v for k, v in record_summary(record).items() if k != "status"}
    if record.status is IntentStatus.SUCCEEDED:
        body: dict[str, Any] = {
            "status": "executed",
            "tool": tool,
            **summary,
            "result": record.result,
            "next_step": f"The change is applied. Do not call {tool} again for it.",
        }
        if record.reconciled:
            body["message"] = "The call timed out, and reconciliation found it was applied."
        if record.result_encoding:
            body["result_encoding"] = record.result_encoding
            body["note"] = (
                "The result held values JSON cannot carry (NaN, infinities, non-text keys...); "
                'they are shown tagged, like {"$float": "NaN"}.'
            )
        return body, False
    if record.status is IntentStatus.OUTCOME_UNKNOWN:
        return {
            "error": ErrorCode.OUTCOME_UNKNOWN,
            "tool": tool,
            **summary,
            "message": (
                f"{record.error or 'the call failed in transit'}: whether the change was applied "
                "is unknown. It is recorded for reconciliation and will not be retried."
            ),
            "next_step": ("Do not call it again. Tell the user the outcome is being reconciled."),
        }, True
    if record.status is IntentStatus.NOT_APPLIED:
        return {
            "error": ErrorCode.NOT_APPLIED,
            "tool": tool,
            **summary,
            "message": "The call timed out, and reconciliation found it was not applied.",
            "next_step": f"If the change is still wanted, {_retry_hint(tool)}.",
        }, True
    return {
        "error": ErrorCode.MUTATION_FAILED,
        "tool": tool,
        **summary,
        "message": f"The service refused the change: {record.error}. It was not applied.",
        "next_step": "Report the error to the user; do not repeat the same call unchanged.",
    }, True
