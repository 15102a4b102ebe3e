"""The `load_context` tool the model calls to switch scope, and the breadcrumbs it returns."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from pydantic import Field, WithJsonSchema, create_model

from attention_scoping.core.errors import ErrorCode, render_payload
from attention_scoping.scoping.catalog import LOAD_CONTEXT, ScopeCatalog

STATE_KEY = "active_context"
"""The state key holding the active scope name (None: unscoped)."""



def scope_tools(catalog: ScopeCatalog, scope: str | None) -> list[str]:
    """Tool names visible in `scope`: the scope's tools in order, then always-on tools."""
    own = list(catalog.scopes[scope].tools) if scope is not None else []
    return own + [t for t in catalog.always_on if t not in own]


def loaded_payload(catalog: ScopeCatalog, scope: str, previous: str | None) -> dict[str, Any]:
    """Breadcrumb for a successful switch: what is active, what can be called, what to do."""
    already = scope == previous
    return {
        "status": "ok",
        "active_context": scope,
        "previous_context": previous,
        "message": (
            f"Context {scope!r} was already active."
            if already
            else f"Context {scope!r} is now active."
        ),
        "tools_now_available": scope_tools(catalog, scope),
        "next_step": (
            "Continue with the user's request now, calling these tools directly. "
            f"Call {LOAD_CONTEXT} again only if the request needs another context."
        ),
    }


def unknown_context_payload(catalog: ScopeCatalog, requested: Any) -> dict[str, Any]:
    """Error for a `load_context` call with a name that is not a scope."""
    text = requested if isinstance(requested, str) else json.dumps(requested)
    return {
        "error": ErrorCode.UNKNOWN_CONTEXT,
        "requested": text,
        "message": f"There is no context named {text!r}{catalog.closest_scope(str(text))}.",
        "valid_contexts": list(catalog.names),
        "next_step": f"Call {LOAD_CONTEXT} with one of the valid contexts.",
    }


def switch_command(
    catalog: ScopeCatalog, scope: str, previous: str | None, tool_call_id: str
) -> Command[Any]:
    """The state update of a successful `load_context`: new scope plus its breadcrumb message."""
    message = ToolMessage(
        render_payload(loaded_payload(catalog, scope, previous)),
        tool_call_id=tool_call_id,
        name=LOAD_CONTEXT,
    )
    return Command(update={STATE_KEY: scope, "messages": [message]})


def make_load_context_tool(catalog: ScopeCatalog) -> BaseTool:
    """Build the `load_context(name)` tool for `catalog` (scope names as a JSON-schema enum).

    The tool returns a `Command` that sets `active_context`; the middleware validates the name
    first so a wrong one gets a structured error listing the valid scopes.
    """
    names = catalog.names
    # An explicit enum: pydantic would emit `const` for a single scope.
    name_type: Any = Annotated[
        Literal[names],
        WithJsonSchema({"type": "string", "enum": list(names)}),
    ]
    args_schema = create_model(
        "LoadContextArgs",
        name=(
            name_type,
            Field(description="Name of the context to load: " + ", ".join(names) + "."),
        ),
        tool_call_id=(Annotated[str, InjectedToolCallId], ...),
        previous=(Annotated[str | None, InjectedState(STATE_KEY)], None),
    )

    def load_context(name: str, tool_call_id: str, previous: str | None = None) -> Command[Any]:
        return switch_command(catalog, name, previous, tool_call_id)

    return StructuredTool.from_function(
        load_context,
        name=LOAD_CONTEXT,
        description=(
            "Switch the agent to another context so that context's tools and instructions are "
            "loaded for the next step. Call it when the request needs a tool the current context "
            "does not have."
        ),
        args_schema=args_schema,
    )
