"""The `load_context` tool the model calls to switch scope, and the breadcrumbs it returns.

A scope loaded here is opened by the model (`scope_opened`), so all its tools are in view,
those that write included (`core.blast_radius`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from pydantic import BaseModel, Field, WithJsonSchema, create_model

from attention_scoping.common.errors import render_payload
from attention_scoping.common.messages import current_turn
from attention_scoping.scoping.breadcrumbs import (
    STATE_KEY,
    loaded_payload,
)
from attention_scoping.scoping.catalog import LOAD_CONTEXT, ScopeCatalog
from attention_scoping.scoping.opening import OPENED_KEY, opened_record

MESSAGES_KEY = "messages"
"""The state key of the conversation (`load_context` reads it to name the user turn)."""


def switch_command(
    catalog: ScopeCatalog,
    scope: str,
    previous: str | None,
    tool_call_id: str,
    *,
    with_module: bool = False,
    opened: object = None,
    turn: str = "-1:",
) -> Command[Any]:
    """The state update of a successful `load_context`: new scope, opened by the model (in user
    turn `turn`), plus its breadcrumb message (with `with_module`, the scope's prompt module
    travels in it). `opened` is the record this opening replaces (`scope_opened`)."""
    reopened = (
        scope == previous
        and isinstance(opened, Mapping)
        and opened.get("scope") == scope
        and opened.get("by") == "code"
    )
    payload = loaded_payload(catalog, scope, previous, with_module=with_module, reopened=reopened)
    message = ToolMessage(render_payload(payload), tool_call_id=tool_call_id, name=LOAD_CONTEXT)
    update = {STATE_KEY: scope, OPENED_KEY: opened_record(scope, "model", turn)}
    return Command(update={**update, "messages": [message]})


def name_description(catalog: ScopeCatalog, describe_scopes: bool) -> str:
    """The `name` parameter's description: the scope names, or each with its description (the
    tools that write counted, not named: `ScopeCatalog.line`)."""
    if not describe_scopes:
        return "Name of the context to load: " + ", ".join(catalog.names) + "."
    described = "; ".join(f"{n} ({catalog.line(n)})" for n in catalog.names)
    return "The context to load: " + described + "."


def make_load_context_tool(
    catalog: ScopeCatalog, *, with_module: bool = False, describe_scopes: bool = False
) -> BaseTool:
    """Build the `load_context(name)` tool for `catalog` (scope names as a JSON-schema enum);
    with `with_module`, its result carries the scope's prompt module; with `describe_scopes`,
    its `name` parameter says what each scope holds (the index, for a prompt without one).

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
            Field(description=name_description(catalog, describe_scopes)),
        ),
        tool_call_id=(Annotated[str, InjectedToolCallId], ...),
        previous=(Annotated[str | None, InjectedState(STATE_KEY)], None),
        opened=(Annotated[dict[str, Any] | None, InjectedState(OPENED_KEY)], None),
        messages=(Annotated[list[Any] | None, InjectedState(MESSAGES_KEY)], None),
    )

    def load_context(
        name: str,
        tool_call_id: str,
        previous: str | None = None,
        opened: dict[str, Any] | None = None,
        messages: Sequence[Any] | None = None,
    ) -> Command[Any]:
        turn = current_turn(messages or [])[1]
        return switch_command(
            catalog, name, previous, tool_call_id, with_module=with_module, opened=opened, turn=turn
        )

    return StructuredTool.from_function(
        load_context,
        name=LOAD_CONTEXT,
        description=(
            "Switch the agent to another context so that context's tools and instructions are "
            "loaded for the next step. Call it when the request needs a tool the current context "
            "does not have. Tools that change something load only through your own call, for "
            "the active context too."
        ),
        args_schema=args_schema,
    )


def name_text(tool: BaseTool) -> str:
    """The description of a `load_context` tool's `name` parameter ('' when it has none)."""
    schema = tool.args_schema
    fields = getattr(schema, "model_fields", None)
    info = fields.get("name") if isinstance(fields, Mapping) else None
    return str(info.description or "") if info is not None else ""


def with_name_text(tool: BaseTool, text: str) -> BaseTool:
    """`tool` (a `load_context` tool) with `text` as its `name` parameter's description: a copy
    for the model request (the registered tool runs the call), or `tool` when it says so
    already. How a scope's description that changed after the tool was registered (an MCP list
    change, tools that write learnt at the first request) reaches the model."""
    schema = tool.args_schema
    if not isinstance(schema, type) or not issubclass(schema, BaseModel):
        return tool
    fields = schema.model_fields
    if "name" not in fields or fields["name"].description == text:
        return tool
    info = copy.copy(fields["name"])
    info.description = text
    annotation: Any = info.annotation
    changed = create_model(schema.__name__, __base__=schema, name=(annotation, info))
    return tool.model_copy(update={"args_schema": changed})
