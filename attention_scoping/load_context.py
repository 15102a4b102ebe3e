"""The `load_context` tool the model calls to switch scope, and what it answers.

A scope the model loads is opened by the model: all its tools come into view, those that may
write included. The result is a breadcrumb (what is active, what can be called now, what to do
next) and, outside the layered layout, the scope's prompt module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from pydantic import Field, WithJsonSchema, create_model

from attention_scoping.errors import ErrorCode, Payload, did_you_mean, refusal, render_payload
from attention_scoping.messages import current_turn
from attention_scoping.prompt import Layout, module_layer, modules_in_results
from attention_scoping.risk import Opener
from attention_scoping.scopes import LOAD_CONTEXT, STATE_KEY, ScopeCatalog

OPENED_KEY = "scope_opened"
"""State key of the record of who opened the active scope (`ScopeOpened`)."""


class ScopeOpened(TypedDict):
    """Who opened `scope` and in which user turn (`messages.current_turn`'s key)."""

    scope: str | None
    by: Opener
    turn: str


def opened_record(scope: str | None, by: Opener, turn: str) -> ScopeOpened:
    """The record of one opening, as stored in state."""
    return {"scope": scope, "by": by, "turn": turn}


def loaded_payload(
    catalog: ScopeCatalog, scope: str, previous: str | None, *, module: bool, reopened: bool
) -> Payload:
    """The breadcrumb of a successful switch; with `module`, the scope's prompt module too.
    `reopened`: the scope was active but opened by code, so its other tools appear only now."""
    if reopened:
        message = f"Context {scope!r} is now loaded by you, so all its tools are available."
    elif scope == previous:
        message = f"Context {scope!r} was already active."
    else:
        message = f"Context {scope!r} is now active."
    payload: Payload = {
        "status": "ok",
        "active_context": scope,
        "previous_context": previous,
        "message": message,
        "tools_now_available": list(catalog.visible(scope)),
        "next_step": (
            "Continue with the user's request now, calling these tools directly. "
            f"Call {LOAD_CONTEXT} again only if the request needs another context."
        ),
    }
    if module:
        payload["prompt_module"] = module_layer(catalog, scope)
    return payload


def shown(value: Any, limit: int = 120) -> str:
    """`value` as the model wrote it (JSON for non-strings), cut to a short line."""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            value = f"<{type(value).__name__}>"
    return value if len(value) <= limit else value[: limit - 1] + "…"


def unknown_context_payload(catalog: ScopeCatalog, requested: Any) -> Payload:
    """The refusal of a `load_context` call whose `name` is not a scope (or not a string)."""
    text = shown(requested)
    if isinstance(requested, str):
        problem = f"There is no context named {text!r}{did_you_mean(text, catalog.names)}."
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


def target(call: Mapping[str, Any]) -> Any:
    """The scope a `load_context` call names (any JSON value a model may have written)."""
    args = call.get("args")
    return args.get("name") if isinstance(args, Mapping) else None


def name_description(catalog: ScopeCatalog, describe: bool) -> str:
    """The `name` parameter's description: the scope names, or each with its description."""
    if not describe:
        return "Name of the context to load: " + ", ".join(catalog.names) + "."
    return (
        "The context to load: "
        + "; ".join(f"{n} ({catalog.describe(n)})" for n in catalog.names)
        + "."
    )


def make_load_context_tool(catalog: ScopeCatalog, layout: Layout) -> BaseTool:
    """The `load_context(name)` tool: scope names as a JSON-schema enum, described in the
    compact layout (which has no index); it returns a `Command` setting `active_context`."""
    name_type: Any = Annotated[
        Literal[catalog.names], WithJsonSchema({"type": "string", "enum": list(catalog.names)})
    ]
    fields: dict[str, Any] = {
        "name": (name_type, Field(description=name_description(catalog, layout == "compact"))),
        "tool_call_id": (Annotated[str, InjectedToolCallId], ...),
        "previous": (Annotated[str | None, InjectedState(STATE_KEY)], None),
        "opened": (Annotated[dict[str, Any] | None, InjectedState(OPENED_KEY)], None),
        "messages": (Annotated[list[Any] | None, InjectedState("messages")], None),
    }
    args_schema = create_model("LoadContextArgs", **fields)
    module = modules_in_results(layout)

    def load_context(
        name: str,
        tool_call_id: str,
        previous: str | None = None,
        opened: dict[str, Any] | None = None,
        messages: Sequence[Any] | None = None,
    ) -> Command[Any]:
        by_code = isinstance(opened, Mapping) and opened.get("by") == "code"
        reopened = name == previous and by_code and opened.get("scope") == name  # type: ignore[union-attr]
        payload = loaded_payload(catalog, name, previous, module=module, reopened=reopened)
        message = ToolMessage(render_payload(payload), tool_call_id=tool_call_id, name=LOAD_CONTEXT)
        turn = current_turn(messages or [])[1]
        update = {STATE_KEY: name, OPENED_KEY: opened_record(name, "model", turn)}
        return Command(update={**update, "messages": [message]})

    return StructuredTool.from_function(
        load_context,
        name=LOAD_CONTEXT,
        description=(
            "Switch the agent to another context so that context's tools and instructions are "
            "loaded for the next step. Call it when the request needs a tool the current "
            "context does not have. Tools that may change something load only through your "
            "own call, for the active context too."
        ),
        args_schema=args_schema,
    )
