"""Shared helpers of the add-ons: framework-free (no LangChain import anywhere below here).

The one tool record (`tool`), the blast-radius rule (`blast_radius`: who may open a writing
tool), text helpers (`text`), error codes and payloads (`errors`), exact token counts (`tokens`),
size and depth bounds of untrusted JSON (`limits`) and exceptions as text that never raises
(`failures`). Catalog and query loading moved to the measuring tools
(`attention_scoping_lab.catalog`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.common.blast_radius import Opener, may_open, writes
    from attention_scoping.common.errors import (
        NOT_RUN_ERRORS,
        ErrorCode,
        ErrorPayload,
        Payload,
        error_code,
        render_payload,
    )
    from attention_scoping.common.limits import JsonLimits, LimitExceeded, json_result, measure
    from attention_scoping.common.text import (
        STOP_WORDS,
        Representation,
        did_you_mean,
        did_you_mean_hint,
        identifier_words,
        lexical_tokens,
        split_identifier,
        stem,
        tool_text,
    )
    from attention_scoping.common.tokens import (
        DEFAULT_ENCODING,
        ENCODINGS,
        TokenCounter,
        get_counter,
    )
    from attention_scoping.common.tool import (
        SUMMARY_MAX_CHARS,
        Risk,
        ToolSpec,
        approval_required,
        approval_rule,
        critical_parameters,
        is_critical,
        metadata_risk,
        summarize,
    )

_EXPORTS = {
    "DEFAULT_ENCODING": "tokens",
    "ENCODINGS": "tokens",
    "NOT_RUN_ERRORS": "errors",
    "STOP_WORDS": "text",
    "SUMMARY_MAX_CHARS": "tool",
    "approval_required": "tool",
    "approval_rule": "tool",
    "critical_parameters": "tool",
    "did_you_mean": "text",
    "did_you_mean_hint": "text",
    "error_code": "errors",
    "ErrorCode": "errors",
    "ErrorPayload": "errors",
    "get_counter": "tokens",
    "identifier_words": "text",
    "is_critical": "tool",
    "json_result": "limits",
    "JsonLimits": "limits",
    "lexical_tokens": "text",
    "LimitExceeded": "limits",
    "may_open": "blast_radius",
    "measure": "limits",
    "metadata_risk": "tool",
    "Opener": "blast_radius",
    "Payload": "errors",
    "render_payload": "errors",
    "Representation": "text",
    "Risk": "tool",
    "split_identifier": "text",
    "stem": "text",
    "summarize": "tool",
    "TokenCounter": "tokens",
    "tool_text": "text",
    "ToolSpec": "tool",
    "writes": "blast_radius",
}

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "NOT_RUN_ERRORS",
    "STOP_WORDS",
    "SUMMARY_MAX_CHARS",
    "ErrorCode",
    "ErrorPayload",
    "JsonLimits",
    "LimitExceeded",
    "Opener",
    "Payload",
    "Representation",
    "Risk",
    "TokenCounter",
    "ToolSpec",
    "approval_required",
    "approval_rule",
    "critical_parameters",
    "did_you_mean",
    "did_you_mean_hint",
    "error_code",
    "get_counter",
    "identifier_words",
    "is_critical",
    "json_result",
    "lexical_tokens",
    "may_open",
    "measure",
    "metadata_risk",
    "render_payload",
    "split_identifier",
    "stem",
    "summarize",
    "tool_text",
    "writes",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
