"""Nodes for hand-built `StateGraph`s that run the same middleware hooks as `create_agent`.

The nodes do not reimplement scoping: they call the middleware objects' `wrap_model_call` and
`wrap_tool_call` hooks (sync or async), composed in list order with the first outermost, exactly
as `create_agent` composes them.

The graph's state must declare every key the middleware writes (LangGraph drops an undeclared
key silently, and the middleware then never sees what it wrote): use `ScopedAgentState` (the
keys of every middleware of this package), subclass it, or build one with `agent_state`. Pass
the same class as `state_schema=` to the node factories and a missing key is a
`StateSchemaError` when the node is made, naming the key.

Example:
    ```python
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import tools_condition
    from attention_scoping import AttentionScopingMiddleware
    from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node

    scoping = AttentionScopingMiddleware(scopes)
    graph = StateGraph(ScopedAgentState)
    graph.add_node(
        "model",
        make_model_node(
            llm, middleware=[scoping], system_prompt="...", state_schema=ScopedAgentState
        ),
    )
    graph.add_node("tools", make_tool_node(middleware=[scoping], state_schema=ScopedAgentState))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    app = graph.compile(checkpointer=InMemorySaver())
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import get_runtime
from langgraph.types import Command

from attention_scoping.adapters import hooks
from attention_scoping.adapters.hooks import AsyncToolHandler, ToolHandler, ToolResult
from attention_scoping.adapters.state import (
    StateKeys,
    StateSchemaError,
    agent_state,
    check_state_schema,
)
from attention_scoping.adapters.tools import ToolLike, as_base_tool
from attention_scoping.gating.state import GateState
from attention_scoping.hesitation.state import HesitationState
from attention_scoping.scoping.middleware import ScopingState

__all__ = [
    "ScopedAgentState",
    "StateSchemaError",
    "agent_state",
    "check_state_schema",
    "make_model_node",
    "make_tool_node",
    "registered_tools",
]

ModelHandler = hooks.ModelHandler[Any, Any]
AsyncModelHandler = hooks.AsyncModelHandler[Any, Any]


class ScopedAgentState(ScopingState[Any], GateState[Any], HesitationState[Any]):
    """State for a hand-built agent using this package's middleware, derived from their
    `state_schema`s: `messages` (with `add_messages`), the scoping keys (`active_context`,
    `scope_offered`, `scope_selection`), the gate's (`gate_exposed`, `gate_trace`,
    `gate_turn`) and the hesitation counter (`hesitation`). Subclass it to add your own keys;
    `agent_state` builds the same from your state and a list of middleware."""


def registered_tools(
    tools: Iterable[ToolLike], middleware: Sequence[AgentMiddleware[Any, Any, Any]]
) -> list[BaseTool]:
    """Middleware tools first, then `tools`, as `BaseTool`s, one per name (as `create_agent`)."""
    out: dict[str, BaseTool] = {}
    for item in [t for m in middleware for t in getattr(m, "tools", [])] + list(tools):
        tool = as_base_tool(item)
        out.setdefault(tool.name, tool)
    return list(out.values())


def _normalize(result: Any, commands: list[Command[Any]]) -> ModelResponse[Any]:
    """Turn any `wrap_model_call` result into a `ModelResponse`, collecting its command."""
    if isinstance(result, ExtendedModelResponse):
        if result.command is not None:
            commands.append(result.command)
        return result.model_response
    if isinstance(result, AIMessage):
        return ModelResponse(result=[result])
    return result


def _call_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
    model, messages = _bound(request)
    return ModelResponse(result=[model.invoke(messages)])


async def _acall_model(request: ModelRequest[Any]) -> ModelResponse[Any]:
    model, messages = _bound(request)
    return ModelResponse(result=[await model.ainvoke(messages)])


def _bound(request: ModelRequest[Any]) -> tuple[Runnable[Any, Any], list[AnyMessage]]:
    settings = dict(request.model_settings)
    model: Runnable[Any, Any] = request.model
    if request.tools:
        model = request.model.bind_tools(request.tools, tool_choice=request.tool_choice, **settings)
    elif settings:
        model = request.model.bind(**settings)
    system = [request.system_message] if request.system_message is not None else []
    return model, [*system, *request.messages]


def _update(
    response: ModelResponse[Any], commands: list[Command[Any]], held: StateKeys | None
) -> dict[str, Any]:
    """The node's state update: the reply, then what the middleware's commands write (checked
    against the graph's state when the node knows it)."""
    update: dict[str, Any] = {"messages": list(response.result)}
    for command in commands:
        extra = command.update if isinstance(command.update, dict) else {}
        for key, value in extra.items():
            if key == "messages":
                update["messages"] = [*update["messages"], *value]
            else:
                update[key] = value
    if held is not None:
        held.check_update(update, node="make_model_node")
    return update


def make_model_node(
    model: BaseChatModel,
    tools: Iterable[ToolLike] = (),
    *,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    system_prompt: str | SystemMessage | None = None,
    state_schema: type[Any] | None = None,
) -> Runnable[Any, dict[str, Any]]:
    """A model node (sync and async) that runs the middleware's model-call hooks.

    Args:
        model: The chat model.
        tools: Your tools; the middleware's own tools (e.g. `load_context`) are added.
        middleware: Middleware objects, first = outermost, as in `create_agent`.
        system_prompt: Your system prompt; scoping keeps it inside its core layer.
        state_schema: The state class of your `StateGraph` (say, `ScopedAgentState`). Given,
            it is checked now: it must declare `messages` and every key of each middleware's
            `state_schema`; and a run in which a middleware writes a key it does not declare
            raises too. Omitted, nothing is checked, and a key your state lacks is dropped by
            LangGraph without an error.

    Returns:
        A runnable to pass to `StateGraph.add_node`; it returns `{"messages": [...]}` plus any
        state the middleware writes.

    Raises:
        StateSchemaError: `state_schema` lacks a key the middleware writes (the message names
            each key and the middleware that writes it); at run time, a middleware wrote a key
            `state_schema` lacks.
    """
    held: StateKeys | None = None
    if state_schema is not None:
        check_state_schema(state_schema, middleware, needs=("messages",), node="make_model_node")
        held = StateKeys(state_schema)
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
        return _update(handler(request_for(state)), commands, held)

    async def arun(state: dict[str, Any]) -> dict[str, Any]:
        commands: list[Command[Any]] = []
        handler: AsyncModelHandler = _acall_model
        for mw in reversed(wrappers):
            handler = _wrap_async(mw, handler, commands)
        return _update(await handler(request_for(state)), commands, held)

    return RunnableLambda(run, afunc=arun, name="model")


def _wrap_sync(
    mw: AgentMiddleware[Any, Any, Any], inner: ModelHandler, commands: list[Command[Any]]
) -> ModelHandler:
    def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return _normalize(mw.wrap_model_call(request, inner), commands)

    return handler


def _wrap_async(
    mw: AgentMiddleware[Any, Any, Any], inner: AsyncModelHandler, commands: list[Command[Any]]
) -> AsyncModelHandler:
    async def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return _normalize(await mw.awrap_model_call(request, inner), commands)

    return handler


def _hooked(
    middleware: Sequence[AgentMiddleware[Any, Any, Any]], *names: str
) -> list[AgentMiddleware[Any, Any, Any]]:
    """Middleware overriding any of the hooks `names` (a missing sync/async twin then raises
    `NotImplementedError` on that path, as in `create_agent`)."""
    return [
        m
        for m in middleware
        if any(getattr(type(m), n) is not getattr(AgentMiddleware, n) for n in names)
    ]


def make_tool_node(
    tools: Iterable[ToolLike] = (),
    *,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    state_schema: type[Any] | None = None,
    **tool_node_kwargs: Any,
) -> ToolNode:
    """A `ToolNode` running your tools and the middleware's, behind its tool-call hooks.

    Args:
        tools: Your tools; the middleware's own tools (e.g. `load_context`) are added.
        middleware: Middleware objects, first = outermost, as in `create_agent`.
        state_schema: The state class of your `StateGraph`, checked now as in
            `make_model_node` (the tool hooks read what the model node wrote, such as the
            scope's start set, and tools like `load_context` write state).
        **tool_node_kwargs: Passed to `ToolNode` (e.g. `handle_tool_errors`).

    Raises:
        StateSchemaError: `state_schema` lacks a key the middleware writes.
    """
    if state_schema is not None:
        messages_key = str(tool_node_kwargs.get("messages_key", "messages"))
        check_state_schema(state_schema, middleware, needs=(messages_key,), node="make_tool_node")
    wrappers = _hooked(middleware, "wrap_tool_call", "awrap_tool_call")

    def wrap(request: ToolCallRequest, execute: ToolHandler) -> ToolResult:
        handler = execute
        for mw in reversed(wrappers):
            handler = _bind_tool_hook(mw, handler)
        return handler(request)

    async def awrap(request: ToolCallRequest, execute: AsyncToolHandler) -> ToolResult:
        handler = execute
        for mw in reversed(wrappers):
            handler = _bind_atool_hook(mw, handler)
        return await handler(request)

    return ToolNode(
        registered_tools(tools, middleware),
        wrap_tool_call=wrap if wrappers else None,
        awrap_tool_call=awrap if wrappers else None,
        **tool_node_kwargs,
    )


def _bind_tool_hook(mw: AgentMiddleware[Any, Any, Any], inner: ToolHandler) -> ToolHandler:
    return lambda request: mw.wrap_tool_call(request, inner)


def _bind_atool_hook(
    mw: AgentMiddleware[Any, Any, Any],
    inner: AsyncToolHandler,
) -> AsyncToolHandler:
    return lambda request: mw.awrap_tool_call(request, inner)
