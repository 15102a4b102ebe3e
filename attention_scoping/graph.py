"""Nodes for hand-built `StateGraph`s that run the same middleware hooks as `create_agent`.

The nodes call the middleware's `wrap_model_call` and `wrap_tool_call` hooks (sync or async),
composed in list order with the first outermost, exactly as `create_agent` composes them.

`state_schema=` is required: LangGraph drops an update to an undeclared key silently, so a state
that cannot hold what the middleware writes is a `StateSchemaError` when the node is made, naming
the key. Use `ScopedAgentState`, subclass it, or build one with `agent_state`.

Example:
    ```python
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import tools_condition
    from attention_scoping import AttentionScopingMiddleware
    from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node

    scoping = AttentionScopingMiddleware(scopes)
    graph = StateGraph(ScopedAgentState)
    graph.add_node("model", make_model_node(
        llm, tools, middleware=[scoping], system_prompt="...", state_schema=ScopedAgentState))
    graph.add_node("tools", make_tool_node(
        tools, middleware=[scoping], state_schema=ScopedAgentState))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    app = graph.compile(checkpointer=InMemorySaver())
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, get_type_hints

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import get_runtime
from langgraph.types import Command
from typing_extensions import TypedDict

from attention_scoping.errors import StateSchemaError
from attention_scoping.middleware import ScopingState

__all__ = [
    "ScopedAgentState",
    "agent_state",
    "check_state_schema",
    "make_model_node",
    "make_tool_node",
]

Middleware = AgentMiddleware[Any, Any, Any]
ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
ToolResult = ToolMessage | Command[Any]
ToolHandler = Callable[[ToolCallRequest], ToolResult]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolResult]]

AGENT_ONLY_KEYS = frozenset(get_type_hints(AgentState, include_extras=True)) - {"messages"}
"""Keys of `create_agent`'s own state (`jump_to`, `structured_response`) no node here writes."""


class ScopedAgentState(ScopingState[Any]):
    """State for a hand-built scoping agent: `messages` (with `add_messages`) and the scoping
    keys (`active_context`, `scope_opened`, `scope_selection`). Subclass it for your own keys;
    `agent_state` builds one from your state and any middleware."""


def _hints(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, type) or not hasattr(schema, "__annotations__"):
        msg = f"state_schema must be a class with annotations (a TypedDict), not {schema!r}"
        raise StateSchemaError(msg)
    return get_type_hints(schema, include_extras=True)


def written_keys(middleware: Any) -> dict[str, Any]:
    """Key -> annotation of what `middleware` writes or reads back (its `state_schema`)."""
    schema = getattr(middleware, "state_schema", None)
    if schema is None:
        return {}
    return {k: v for k, v in _hints(schema).items() if k not in AGENT_ONLY_KEYS}


def check_state_schema(
    state_schema: Any, middleware: Iterable[Any], *, needs: Iterable[str] = ("messages",)
) -> None:
    """Raise `StateSchemaError` naming each key the middleware (or `needs`) requires that
    `state_schema` does not declare."""
    have = set(_hints(state_schema))
    missing: dict[str, list[str]] = {}
    for key in needs:
        if key not in have:
            missing.setdefault(key, []).append("the node")
    for mw in middleware:
        for key in written_keys(mw):
            if key not in have:
                missing.setdefault(key, []).append(getattr(mw, "name", type(mw).__name__))
    if missing:
        named = "; ".join(f"{k!r} (needed by {', '.join(who)})" for k, who in missing.items())
        schema = getattr(state_schema, "__name__", repr(state_schema))
        msg = (
            f"the graph state {schema} has no key {named}. LangGraph drops an undeclared key "
            "silently, so the gate could not see what was shown. Subclass "
            f"attention_scoping.graph.ScopedAgentState, or use agent_state({schema}, *middleware)."
        )
        raise StateSchemaError(msg)


def agent_state(*parts: Any, name: str = "AgentGraphState") -> type[Any]:
    """A TypedDict holding every key of `parts`: state schemas (yours first) and middleware
    (read through their `state_schema`); annotations kept, so reducers still apply."""
    fields: dict[str, Any] = {}
    for part in parts:
        hints = written_keys(part) if hasattr(part, "state_schema") else _hints(part)
        for key, annotation in hints.items():
            fields.setdefault(key, annotation)
    fields.setdefault("messages", get_type_hints(AgentState, include_extras=True)["messages"])
    return TypedDict(name, fields)  # type: ignore[operator]


def registered_tools(tools: Iterable[Any], middleware: Sequence[Middleware]) -> list[BaseTool]:
    """Middleware tools first, then `tools`, as `BaseTool`s, one per name (as `create_agent`)."""
    out: dict[str, BaseTool] = {}
    for item in [t for m in middleware for t in getattr(m, "tools", [])] + list(tools):
        made = item if isinstance(item, BaseTool) else as_tool(item)
        out.setdefault(made.name, made)
    return list(out.values())


def _hooked(middleware: Sequence[Middleware], *names: str) -> list[Middleware]:
    return [
        m
        for m in middleware
        if any(getattr(type(m), n) is not getattr(AgentMiddleware, n) for n in names)
    ]


def _normalize(result: Any, commands: list[Command[Any]]) -> ModelResponse[Any]:
    if isinstance(result, ExtendedModelResponse):
        if result.command is not None:
            commands.append(result.command)
        return result.model_response
    return ModelResponse(result=[result]) if isinstance(result, AIMessage) else result


def _bound(request: ModelRequest[Any]) -> tuple[Runnable[Any, Any], list[AnyMessage]]:
    settings = dict(request.model_settings)
    model: Runnable[Any, Any] = request.model
    if request.tools:
        model = request.model.bind_tools(request.tools, tool_choice=request.tool_choice, **settings)
    elif settings:
        model = request.model.bind(**settings)
    system = [request.system_message] if request.system_message is not None else []
    return model, [*system, *request.messages]


def _call_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
    model, messages = _bound(request)
    return ModelResponse(result=[model.invoke(messages)])


async def _acall_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
    model, messages = _bound(request)
    return ModelResponse(result=[await model.ainvoke(messages)])


def _update(
    response: ModelResponse[Any], commands: list[Command[Any]], keys: set[str]
) -> dict[str, Any]:
    update: dict[str, Any] = {"messages": list(response.result)}
    for command in commands:
        for key, value in (command.update if isinstance(command.update, dict) else {}).items():
            update[key] = [*update["messages"], *value] if key == "messages" else value
    extra = sorted(set(update) - keys)
    if extra:
        msg = f"a middleware wrote {', '.join(map(repr, extra))}, which the graph state lacks"
        raise StateSchemaError(msg)
    return update


def make_model_node(
    model: BaseChatModel,
    tools: Iterable[Any] = (),
    *,
    middleware: Sequence[Middleware] = (),
    system_prompt: str | SystemMessage | None = None,
    state_schema: type[Any],
) -> Runnable[Any, dict[str, Any]]:
    """A model node (sync and async) running the middleware's model-call hooks.

    Args:
        model: The chat model.
        tools: Your tools; the middleware's own (`load_context`) are added.
        middleware: Middleware objects, first = outermost, as in `create_agent`.
        system_prompt: Your system prompt; scoping keeps it whole.
        state_schema: The state class of your `StateGraph`, checked now.

    Raises:
        StateSchemaError: `state_schema` lacks `messages` or a key a middleware needs.
    """
    check_state_schema(state_schema, middleware)
    keys = set(_hints(state_schema))
    all_tools: list[BaseTool | dict[str, Any]] = list(registered_tools(tools, middleware))
    wrappers = _hooked(middleware, "wrap_model_call", "awrap_model_call")
    system = SystemMessage(system_prompt) if isinstance(system_prompt, str) else system_prompt

    def request_for(state: dict[str, Any]) -> ModelRequest[Any]:
        return ModelRequest(
            model=model,
            messages=list(state["messages"]),
            system_message=system,
            tools=list(all_tools),
            state=state,  # type: ignore[arg-type]
            runtime=get_runtime(),
        )

    def run(state: dict[str, Any]) -> dict[str, Any]:
        commands: list[Command[Any]] = []
        handler: ModelHandler = _call_model
        for mw in reversed(wrappers):
            handler = _wrap_sync(mw, handler, commands)
        return _update(handler(request_for(state)), commands, keys)

    async def arun(state: dict[str, Any]) -> dict[str, Any]:
        commands: list[Command[Any]] = []
        handler: AsyncModelHandler = _acall_model
        for mw in reversed(wrappers):
            handler = _wrap_async(mw, handler, commands)
        return _update(await handler(request_for(state)), commands, keys)

    return RunnableLambda(run, afunc=arun, name="model")


def _wrap_sync(mw: Middleware, inner: ModelHandler, commands: list[Command[Any]]) -> ModelHandler:
    return lambda request: _normalize(mw.wrap_model_call(request, inner), commands)


def _wrap_async(
    mw: Middleware, inner: AsyncModelHandler, commands: list[Command[Any]]
) -> AsyncModelHandler:
    async def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return _normalize(await mw.awrap_model_call(request, inner), commands)

    return handler


def make_tool_node(
    tools: Iterable[Any] = (),
    *,
    middleware: Sequence[Middleware] = (),
    state_schema: type[Any],
    **tool_node_kwargs: Any,
) -> ToolNode:
    """A `ToolNode` running your tools and the middleware's, behind their tool-call hooks.

    Args:
        tools: Your tools; the middleware's own (`load_context`) are added.
        middleware: Middleware objects, first = outermost, as in `create_agent`.
        state_schema: The state class of your `StateGraph`, checked as in `make_model_node`.
        **tool_node_kwargs: Passed to `ToolNode` (e.g. `handle_tool_errors`).

    Raises:
        StateSchemaError: `state_schema` lacks a key a middleware needs.
    """
    messages_key = str(tool_node_kwargs.get("messages_key", "messages"))
    check_state_schema(state_schema, middleware, needs=(messages_key,))
    wrappers = _hooked(middleware, "wrap_tool_call", "awrap_tool_call")

    def wrap(request: ToolCallRequest, execute: ToolHandler) -> ToolResult:
        handler = execute
        for mw in reversed(wrappers):
            handler = _bind(mw, handler)
        return handler(request)

    async def awrap(request: ToolCallRequest, execute: AsyncToolHandler) -> ToolResult:
        handler = execute
        for mw in reversed(wrappers):
            handler = _abind(mw, handler)
        return await handler(request)

    return ToolNode(
        registered_tools(tools, middleware),
        wrap_tool_call=wrap if wrappers else None,
        awrap_tool_call=awrap if wrappers else None,
        **tool_node_kwargs,
    )


def _bind(mw: Middleware, inner: ToolHandler) -> ToolHandler:
    return lambda request: mw.wrap_tool_call(request, inner)


def _abind(mw: Middleware, inner: AsyncToolHandler) -> AsyncToolHandler:
    return lambda request: mw.awrap_tool_call(request, inner)
