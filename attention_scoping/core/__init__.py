"""Core: the framework-free heart of the package (no LangChain import anywhere below here).

The one tool record (`tool`), catalog and query loading (`catalog`), text helpers (`text`), error
codes and payloads (`errors`) and exact token counts (`tokens`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.core.catalog import (
        REQUIRED_QUERY_FIELDS,
        REQUIRED_TOOL_FIELDS,
        CatalogError,
        Query,
        load_catalog,
        load_openai_tools,
        load_queries,
    )
    from attention_scoping.core.errors import (
        NOT_RUN_ERRORS,
        ErrorCode,
        ErrorPayload,
        Payload,
        error_code,
        render_payload,
    )
    from attention_scoping.core.text import (
        STOP_WORDS,
        Representation,
        lexical_tokens,
        split_identifier,
        tool_text,
    )
    from attention_scoping.core.tokens import DEFAULT_ENCODING, ENCODINGS, TokenCounter, get_counter
    from attention_scoping.core.tool import SUMMARY_MAX_CHARS, ToolSpec, summarize

_EXPORTS = {
    "DEFAULT_ENCODING": "tokens",
    "ENCODINGS": "tokens",
    "NOT_RUN_ERRORS": "errors",
    "REQUIRED_QUERY_FIELDS": "catalog",
    "REQUIRED_TOOL_FIELDS": "catalog",
    "STOP_WORDS": "text",
    "SUMMARY_MAX_CHARS": "tool",
    "CatalogError": "catalog",
    "error_code": "errors",
    "ErrorCode": "errors",
    "ErrorPayload": "errors",
    "get_counter": "tokens",
    "lexical_tokens": "text",
    "load_catalog": "catalog",
    "load_openai_tools": "catalog",
    "load_queries": "catalog",
    "Payload": "errors",
    "Query": "catalog",
    "render_payload": "errors",
    "Representation": "text",
    "split_identifier": "text",
    "summarize": "tool",
    "TokenCounter": "tokens",
    "tool_text": "text",
    "ToolSpec": "tool",
}

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "NOT_RUN_ERRORS",
    "REQUIRED_QUERY_FIELDS",
    "REQUIRED_TOOL_FIELDS",
    "STOP_WORDS",
    "SUMMARY_MAX_CHARS",
    "CatalogError",
    "ErrorCode",
    "ErrorPayload",
    "Payload",
    "Query",
    "Representation",
    "TokenCounter",
    "ToolSpec",
    "error_code",
    "get_counter",
    "lexical_tokens",
    "load_catalog",
    "load_openai_tools",
    "load_queries",
    "render_payload",
    "split_identifier",
    "summarize",
    "tool_text",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
