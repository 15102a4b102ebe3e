"""What `load_context` answers: the breadcrumb of a switch and the error for an unknown scope.

Framework-free, so the scope gate's decision can use it; `navigation` wraps it in a LangChain
tool and a LangGraph `Command`.
"""

from __future__ import annotations

import json
from typing import Any

from attention_scoping.common.errors import ErrorCode, ErrorPayload, refusal
from attention_scoping.common.limits import shorten
from attention_scoping.scoping.catalog import LOAD_CONTEXT, ScopeCatalog
from attention_scoping.scoping.prompts import module_layer

STATE_KEY = "active_context"
"""The state key holding the active scope name (None: unscoped)."""


def scope_tools(catalog: ScopeCatalog, scope: str | None) -> list[str]:
    """Tool names visible in `scope`: the scope's tools in order, then always-on tools."""
    own = list(catalog.scopes[scope].tools) if scope is not None else []
    return own + [t for t in catalog.always_on if t not in own]


def _loaded_message(scope: str, previous: str | None, reopened: bool) -> str:
    if reopened:  # code had opened it with its reading tools only
        return (
            f"Context {scope!r} is now loaded by you, so its tools that change something are "
            "available too."
        )
    if scope == previous:
        return f"Context {scope!r} was already active."
    return f"Context {scope!r} is now active."


def loaded_payload(
    catalog: ScopeCatalog,
    scope: str,
    previous: str | None,
    *,
    with_module: bool = False,
    reopened: bool = False,
) -> dict[str, Any]:
    """Breadcrumb for a successful switch: what is active, what can be called, what to do;
    with `with_module`, also the scope's prompt module (cache-stable delivery: the module is
    appended to the conversation instead of swapped into the system prompt). `reopened`: the
    scope was active but opened by code, so its writing tools appear only now."""
    payload: dict[str, Any] = {
        "status": "ok",
        "active_context": scope,
        "previous_context": previous,
        "message": _loaded_message(scope, previous, reopened),
        "tools_now_available": scope_tools(catalog, scope),
        "next_step": (
            "Continue with the user's request now, calling these tools directly. "
            f"Call {LOAD_CONTEXT} again only if the request needs another context."
        ),
    }
    if with_module:
        payload["prompt_module"] = module_layer(catalog, scope)
    return payload


def shown_value(value: Any) -> str:
    """`value` as the model wrote it (JSON for non-strings), cut to a short line."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            text = f"<{type(value).__name__}>"
    return shorten(text)


def unknown_context_payload(catalog: ScopeCatalog, requested: Any) -> ErrorPayload:
    """Error for a `load_context` call with a name that is not a scope (or not a string)."""
    text = shown_value(requested)
    if isinstance(requested, str):
        problem = f"There is no context named {text!r}{catalog.closest_scope(text)}."
    else:
        kind = "null" if requested is None else type(requested).__name__
        problem = f"`name` must be one context name (a string), not {kind} {text}."
    return refusal(
        ErrorCode.UNKNOWN_CONTEXT,
        problem,
        requested=text,
        valid_contexts=list(catalog.names),
        next_step=f"Call {LOAD_CONTEXT} with one of the valid contexts.",
    )
