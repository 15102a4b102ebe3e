"""Attention-scoping middleware: per model call, only the active scope's tools and prompt."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ModelRequest,
    ModelResponse,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from typing_extensions import override

from attention_scoping.adapters.refusals import RefusesToolCalls, refusal_message
from attention_scoping.adapters.tools import ToolLike, as_base_tool, tool_name
from attention_scoping.scoping.catalog import Scope, ScopeCatalog, ToolScopes
from attention_scoping.scoping.gate import review_call, sibling_calls
from attention_scoping.scoping.navigation import STATE_KEY, make_load_context_tool
from attention_scoping.scoping.prompts import (
    DEFAULT_CORE,
    INDEX_HEADER,
    PromptLayers,
    build_layers,
    capability_index,
)

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)

UnscopedPolicy = Literal["hide", "show"]
"""What to do with registered tools that no scope names: hide them (default) or always show."""


def _forced_tool(choice: Any) -> str | None:
    """The tool a `tool_choice` forces by name, if any ('auto', 'required'... force none)."""
    if isinstance(choice, str):
        return None if choice in {"auto", "none", "any", "required"} else choice
    if isinstance(choice, Mapping):
        fn = choice.get("function")
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            return fn["name"]
        if isinstance(choice.get("name"), str):
            return choice["name"]
    return None


class ScopingState(AgentState[ResponseT]):
    """Agent state extended with the active scope; input-able and checkpointed."""

    active_context: NotRequired[str | None]


class AttentionScopingMiddleware(
    RefusesToolCalls, AgentMiddleware[ScopingState[ResponseT], ContextT, ResponseT]
):
    """Show the model only the active scope's tools and a three-layer system prompt.

    Before every model call the tool list is narrowed to the tools of `state["active_context"]`
    plus always-on tools (`load_context` at least), and the system prompt becomes: capability
    index (one line per scope) + core (our navigation rules and your own `system_prompt`) +
    the active scope's prompt module. The model switches scope itself by calling
    `load_context(name)`. Calls to tools outside the active scope are refused with a
    structured error and never run.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping import AttentionScopingMiddleware, Scope

        scoping = AttentionScopingMiddleware(
            [
                Scope("math", "arithmetic and statistics", tools=[calculate, stats]),
                Scope("weather", "current weather and forecasts", tools=[get_weather]),
            ],
        )
        agent = create_agent(model, system_prompt="You are concise.", middleware=[scoping])
        agent.invoke({"messages": [("user", "What is 47 * 83?")]})
        ```

    The plain form works too: `AttentionScopingMiddleware(TOOL_SCOPES, tools=ALL_TOOLS)` with
    `TOOL_SCOPES = {"math": {"calculate", "stats"}, ...}`.
    """

    state_schema = ScopingState  # type: ignore[assignment]

    def __init__(
        self,
        scopes: Sequence[Scope] | ToolScopes | ScopeCatalog,
        *,
        tools: Iterable[ToolLike] | None = None,
        always_on: Iterable[str | ToolLike] = (),
        default_scope: str | None = None,
        core_prompt: str = DEFAULT_CORE,
        index_header: str = INDEX_HEADER,
        unscoped_tools: UnscopedPolicy = "hide",
        emit_events: bool = True,
        name: str | None = None,
    ) -> None:
        """Validate the scopes and build the `load_context` tool.

        Args:
            scopes: `Scope` objects, a plain `TOOL_SCOPES` dict, or a prebuilt `ScopeCatalog`.
            tools: Every tool the scopes refer to. They are registered with the agent by this
                middleware (passing them to `create_agent(tools=...)` as well is harmless) and
                let scope tool names be validated now rather than at the first model call.
            always_on: Tools visible in every scope besides `load_context`.
            default_scope: Scope in force while `active_context` is unset (None: no tools but
                the always-on ones until the model calls `load_context`).
            core_prompt: Our part of the core layer (navigation rules); your own
                `create_agent(system_prompt=...)` is appended to it, never dropped.
            index_header: First line(s) of the capability index.
            unscoped_tools: Registered tools that no scope names: `"hide"` (refused if called;
                a warning is logged once) or `"show"` (treated as always-on).
            emit_events: Emit a `{"type": "scope", ...}` custom stream event per model call.
            name: Middleware name, to use two instances in one agent.

        Raises:
            ScopeConfigError: An unknown tool or default scope, or a duplicate name.
        """
        super().__init__()
        if isinstance(scopes, ScopeCatalog):
            if tools is not None or always_on or default_scope is not None:
                msg = "pass tools/always_on/default_scope to the ScopeCatalog, not twice"
                raise ValueError(msg)
            self.catalog = scopes
        else:
            self.catalog = ScopeCatalog(
                scopes, always_on=always_on, default_scope=default_scope, tools=tools
            )
        if unscoped_tools not in ("hide", "show"):
            msg = f"unscoped_tools must be 'hide' or 'show', not {unscoped_tools!r}"
            raise ValueError(msg)
        self.core_prompt = core_prompt
        """Framework text of the core layer."""
        self.unscoped_tools: UnscopedPolicy = unscoped_tools
        """Policy for registered tools outside every scope."""
        self.emit_events = emit_events
        """Whether a scope event is written to the custom stream per model call."""
        self.index = capability_index(self.catalog, index_header)
        """The capability index layer (fixed for the middleware's lifetime)."""
        self.load_context_tool: BaseTool = make_load_context_tool(self.catalog)
        """The `load_context` tool registered with the agent."""
        self.tools = [
            self.load_context_tool,
            *(as_base_tool(t) for t in self.catalog.tool_objects.values()),
        ]
        self._name = name
        self._warned: set[str] = set()

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    # -- pure helpers shared by the middleware hooks and the graph nodes ---------------------

    def active_scope(self, state: Mapping[str, Any]) -> str | None:
        """The scope in force for `state` (its `active_context`, else the default scope)."""
        return self.catalog.resolve(state.get(STATE_KEY))

    def prompt_layers(
        self, state: Mapping[str, Any], user_prompt: str | None = None
    ) -> PromptLayers:
        """The three prompt layers the model gets for `state` (for UIs, tests and audits)."""
        return build_layers(
            self.catalog,
            self.active_scope(state),
            index=self.index,
            framework_core=self.core_prompt,
            user_prompt=user_prompt,
        )

    def filter_tools(
        self, tools: Sequence[BaseTool | dict[str, Any]], scope: str | None
    ) -> list[BaseTool | dict[str, Any]]:
        """Keep the tools visible in `scope`; provider tool dicts no scope names pass through."""
        visible = self.catalog.visible(scope)
        scoped = self.catalog.scoped_names
        kept: list[BaseTool | dict[str, Any]] = []
        for tool in tools:
            tname = tool_name(tool) if isinstance(tool, dict) else tool.name
            if tname in visible:
                kept.append(tool)
            elif tname not in scoped:
                if isinstance(tool, dict) or self.unscoped_tools == "show":
                    kept.append(tool)
                elif tname not in self._warned:
                    self._warned.add(tname)
                    logger.warning(
                        "tool %r is registered but no scope names it, so it is hidden; add it "
                        "to a Scope or to always_on, or pass unscoped_tools='show'",
                        tname,
                    )
        return kept

    def visible_tool_names(
        self, state: Mapping[str, Any], tools: Sequence[BaseTool | dict[str, Any]] | None = None
    ) -> list[str]:
        """Names of the tools the model sees in `state` (over `tools`, default: registered)."""
        pool = list(tools) if tools is not None else list(self.tools)
        return [tool_name(t) for t in self.filter_tools(pool, self.active_scope(state))]

    def prepare_request(self, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        """Narrow `request` to the active scope and set the three-layer system prompt."""
        if not self.catalog.validated:
            self.catalog.validate_tools(
                tool_name(t) for t in request.tools if not isinstance(t, dict)
            )
        scope = self.active_scope(request.state)
        tools = self.filter_tools(request.tools, scope)
        user_prompt = request.system_message.text if request.system_message is not None else None
        layers = self.prompt_layers(request.state, user_prompt)
        if self.emit_events and request.runtime is not None:
            writer = getattr(request.runtime, "stream_writer", None)
            if writer is not None:
                writer(
                    {
                        "type": "scope",
                        "active_context": scope,
                        "tools": [tool_name(t) for t in tools],
                        "registered_tools": len(request.tools),
                    }
                )
        overrides: dict[str, Any] = {}
        forced = _forced_tool(request.tool_choice)
        if forced is not None and forced not in {tool_name(t) for t in tools}:
            # A choice naming a tool this scope hides would make the provider reject the call.
            logger.debug("tool_choice %r is hidden in scope %r; using 'required'", forced, scope)
            overrides["tool_choice"] = "required"
        return request.override(
            tools=tools, system_message=SystemMessage(layers.render()), **overrides
        )

    def review_tool_call(self, request: ToolCallRequest) -> ToolMessage | None:
        """A refusal `ToolMessage` when the call is outside the active scope, else None."""
        call = request.tool_call
        state = request.state if isinstance(request.state, Mapping) else {}
        scope = self.active_scope(state)
        extra: frozenset[str] = frozenset()
        if (
            self.unscoped_tools == "show"
            and request.tool is not None
            and not self.catalog.is_scoped(call["name"])
        ):
            extra = frozenset({call["name"]})
        siblings = sibling_calls(state.get("messages", []), call.get("id")) or [dict(call)]
        payload = review_call(self.catalog, scope, call, siblings, extra_visible=extra)
        if payload is None:
            return None
        return refusal_message(call, payload)

    # -- LangChain hooks --------------------------------------------------------------------

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]],
    ) -> ModelResponse[ResponseT]:
        """Call the model with the scoped tools and the three-layer prompt."""
        return handler(self.prepare_request(request))

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelResponse[ResponseT]:
        """Async form of `wrap_model_call`."""
        return await handler(self.prepare_request(request))
