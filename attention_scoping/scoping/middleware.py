"""Attention-scoping middleware: per model call, only the active scope's tools and prompt."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.adapters.hooks import AsyncModelHandler, ModelHandler
from attention_scoping.adapters.hygiene import repair_response, thread_call_ids
from attention_scoping.adapters.refusals import RefusesToolCalls, ToolResult, refusal_message
from attention_scoping.adapters.tools import (
    ToolLike,
    as_base_tool,
    is_pinned,
    mark_pinned,
    tool_name,
    visible_tool_choice,
)
from attention_scoping.common.blast_radius import Opener, may_open
from attention_scoping.common.messages import current_turn, intent_text, is_user_turn
from attention_scoping.common.option_groups import regroup, resolve_moved
from attention_scoping.common.options import check_choice
from attention_scoping.disclosure.base import (
    DEFAULT_DISCLOSURE,
    SEARCH_TOOL,
    VISIBLE_KEY,
    Disclosure,
    DisclosureMode,
    DisclosureSetting,
)
from attention_scoping.disclosure.tail import (
    make_search_tool,
    missing,
    on_wire,
    pair_id,
    read_reply,
    undisclosed_payload,
    with_pair,
)
from attention_scoping.scoping.catalog import (
    LOAD_CONTEXT,
    Scope,
    ScopeCatalog,
    ScopeConfigError,
    ToolScopes,
    UnknownScopeError,
)
from attention_scoping.scoping.gate import (
    Adoption,
    adopted_scope,
    closed_writes,
    review_call,
    sibling_calls,
)
from attention_scoping.scoping.native import (
    disclosed_load,
    opened_text,
    scope_groups,
    with_module_text,
)
from attention_scoping.scoping.navigation import (
    STATE_KEY,
    make_load_context_tool,
    name_description,
    with_name_text,
)
from attention_scoping.scoping.opening import (
    OPENED_KEY,
    ScopeOpened,
    opened_record,
    read_opener,
    same_opening,
)
from attention_scoping.scoping.options import (
    DEFAULT_LAYOUT,
    DEFAULT_NAVIGATION,
    LAYOUT_PRESETS,
    MOVED,
    NAVIGATION_PRESETS,
    OLD_DEFAULT_LAYOUT,
    Layout,
    LayoutPreset,
    Navigation,
    NavigationPreset,
)
from attention_scoping.scoping.options import DEFAULT_TOP_K as DEFAULT_TOP_K
from attention_scoping.scoping.options import ForeignToolPolicy as ForeignToolPolicy
from attention_scoping.scoping.options import InvalidContextPolicy as InvalidContextPolicy
from attention_scoping.scoping.options import ModuleDelivery as ModuleDelivery
from attention_scoping.scoping.options import UnscopedPolicy as UnscopedPolicy
from attention_scoping.scoping.preselect import SELECTION_KEY, ScopeChoice, names_from
from attention_scoping.scoping.prompts import (
    PromptLayers,
    PromptLayout,
    build_layers,
    capability_index,
)
from attention_scoping.scoping.ranked import (
    SCOPE_DISCLOSE_K,
    ScopeDisclosure,
    ScopeDisclosureOptions,
    ranked_names,
    scope_disclosure_options,
    scope_search_payload,
    searched_names,
    with_ranked_text,
)
from attention_scoping.scoping.start import ScopeStart

logger = logging.getLogger(__name__)

UNSCOPED_NAMES_SHOWN = 10
"""How many hidden unscoped tools the one warning names (the rest are counted)."""


class ScopingState(AgentState[ResponseT]):
    """Agent state extended with the active scope; input-able and checkpointed. Every key the
    scoping middleware and `load_context` write is declared here."""

    active_context: NotRequired[str | None]
    scope_offered: NotRequired[Annotated[list[str] | None, OmitFromInput]]
    """Tools (that read) the start mode offered while no scope was active: a call to one loads
    its scope; they leave view once a scope is loaded."""
    scope_selection: NotRequired[Annotated[dict[str, Any] | None, OmitFromInput]]
    """The last intent pre-selection: scope, reason, margin, scores, matched tools (those that
    read), and the user turn it was made for (`turn`)."""
    scope_opened: NotRequired[Annotated[ScopeOpened | None, OmitFromInput]]
    """Who opened the active scope: `{"scope", "by", "turn"}` with `by` `"model"`
    (`load_context`), `"application"` (`active_context` it set, the default scope) or `"code"`
    (pre-selection, a start-set call, `on_foreign_tool="switch"`). A scope opened by code shows
    only its tools that read (`core.blast_radius`)."""


@dataclass(frozen=True)
class CallPlan:
    """What one model call shows: the scope, the start set, and the state to write."""

    scope: str | None
    offered: tuple[str, ...] = ()
    choice: ScopeChoice | None = None
    updates: dict[str, Any] = field(default_factory=dict)
    opener: Opener = "application"
    """Who opened `scope`: with `"code"`, its tools that write stay out of view."""


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
        navigation: Navigation | NavigationPreset = DEFAULT_NAVIGATION,
        layout: Layout | LayoutPreset = DEFAULT_LAYOUT,
        unscoped_tools: UnscopedPolicy = "hide",
        invalid_context: InvalidContextPolicy = "default",
        disclosure: DisclosureMode | ScopeDisclosureOptions = DEFAULT_DISCLOSURE,
        emit_events: bool = True,
        name: str | None = None,
        **deprecated: Any,
    ) -> None:
        """Validate the scopes and the options, and build the `load_context` tool.

        Args:
            scopes: `Scope` objects, a plain `TOOL_SCOPES` dict, or a prebuilt `ScopeCatalog`.
            tools: Every tool the scopes refer to. They are registered with the agent by this
                middleware (passing them to `create_agent(tools=...)` as well is harmless) and
                let scope tool names be validated now rather than at the first model call.
            always_on: Tools visible in every scope besides `load_context`; they are marked
                pinned in their metadata (`adapters.tools.PINNED`), so a gate after this
                middleware always sends them too.
            default_scope: Scope in force while `active_context` is unset (None: no tools but
                the always-on ones until the model calls `load_context`).
            navigation: How the model reaches a scope: a `Navigation(...)` (pre-selection,
                the start set of unscoped calls, the ranker, calls to another scope's tool) or
                a preset: `"preselect"` (default: the scope is pre-selected from each new user
                message, else the best tools are offered) or `"model"` (the model navigates by
                `load_context` alone). See `attention_scoping.scoping.options`.
            layout: How the system prompt is laid out: a `Layout(...)` (prompt layout, module
                delivery, core prompt, index header) or a preset: `"compact"` (default: your
                prompt alone, the scopes described by `load_context`, modules in its results),
                `"layered"` (capability index, core and the active module in the system
                prompt) or `"stable"` (layered, the modules in `load_context` results so the
                system prompt never changes).
            unscoped_tools: Registered tools that no scope names: `"hide"` (refused if called;
                one warning names the newly seen ones) or `"show"` (treated as always-on).
            invalid_context: A stale, renamed or mistyped `active_context` in state (say, from
                an old checkpoint): `"default"` uses the default scope, logs a warning and
                repairs the state; `"raise"` raises `UnknownScopeError`.
            disclosure: How the scope reaches the provider (`attention_scoping.disclosure`):
                `"auto"` (default: from the chat model class, resolved and logged at the first
                model call), `"rewrite"` (the tools array narrowed to the scope, any model),
                `"anthropic"`, `"openai"` or `"allowed_tools"` (every tool sent and the system
                prompt fixed, so the provider's prompt cache keeps its prefix; the scope is
                disclosed at the tail). A mode the chat model cannot carry raises `ValueError`
                at the first model call.
            disclosure=ScopeDisclosureOptions(mode, scope_tools): in the native modes that
                disclose in the history (`"anthropic"`, `"openai"`), `scope_tools="ranked"`
                (default) discloses the scope's tools the request names exactly and the
                ranker's 5 best for it, at a load and at each new user turn; the rest load with
                the search tool (`search_tools`, restricted to the active scope) and are refused
                until then; `"whole"` discloses every tool of the scope at its load
                (`attention_scoping.scoping.ranked`).
            emit_events: Emit a `{"type": "scope", ...}` custom stream event per model call.
            name: Middleware name, to use two instances in one agent.
            **deprecated: The keyword options of 0.1 that moved into `navigation` and `layout`
                (`preselect`, `start`, `start_top_k`, `preselect_margin`,
                `preselect_min_score`, `ranker`, `on_foreign_tool`, `prompt_layout`,
                `module_delivery`, `core_prompt`, `index_header`): accepted for one release
                with a `DeprecationWarning` naming the new spelling.

        Raises:
            ScopeConfigError: An unknown tool or default scope, a duplicate name, an unknown
                preset or option value, or two options that contradict each other.
            ValueError: An unknown `disclosure` mode or `scope_tools` value.
            TypeError: A keyword argument that does not exist.
        """
        super().__init__()
        moved = regroup(type(self).__name__, deprecated, MOVED, error=ScopeConfigError)
        nav = resolve_moved(
            "navigation", navigation, Navigation, NAVIGATION_PRESETS, moved, ScopeConfigError
        )
        old_layout = moved.get("layout")
        if old_layout and "prompt" not in old_layout and layout == DEFAULT_LAYOUT:
            layout = OLD_DEFAULT_LAYOUT  # 0.1's keywords were written against its default
        lay = resolve_moved("layout", layout, Layout, LAYOUT_PRESETS, moved, ScopeConfigError)
        if isinstance(scopes, ScopeCatalog):
            if tools is not None or always_on or default_scope is not None:
                msg = "pass tools/always_on/default_scope to the ScopeCatalog, not twice"
                raise ValueError(msg)
            self.catalog = scopes
        else:
            self.catalog = ScopeCatalog(
                scopes, always_on=always_on, default_scope=default_scope, tools=tools
            )
        check_choice("unscoped_tools", unscoped_tools, UnscopedPolicy)
        check_choice("invalid_context", invalid_context, InvalidContextPolicy)
        self.navigation: Navigation = nav
        """The navigation options in force (presets resolved)."""
        self.layout: Layout = lay
        """The layout options in force (presets resolved)."""
        self.prompt_layout: PromptLayout = lay.prompt
        """How the system prompt is laid out."""
        self.module_delivery: ModuleDelivery = lay.delivery
        """Where the active scope's prompt module is delivered."""
        self.core_prompt = lay.core
        """Framework text of the core layer."""
        self.unscoped_tools: UnscopedPolicy = unscoped_tools
        self.invalid_context: InvalidContextPolicy = invalid_context
        """Policy for a stale or mistyped `active_context`."""
        self.on_foreign_tool: ForeignToolPolicy = nav.on_foreign_tool
        """Policy for a call to another scope's tool."""
        self.start = ScopeStart(self.catalog, **nav.start_options())
        """Pre-selection and the start set of unscoped calls."""
        self.emit_events = emit_events
        """Whether a scope event is written to the custom stream per model call."""
        disclosing = scope_disclosure_options(disclosure)
        pinned_names = {n for n, t in self.catalog.tool_objects.items() if is_pinned(t)}
        self.disclosure = DisclosureSetting(
            disclosing.mode,
            type(self).__name__,
            deferred=len(self.catalog.scoped_names - set(self.catalog.always_on) - pinned_names),
        )
        """The `disclosure=` option, resolved per chat model at its first call."""
        self.scope_disclosure: ScopeDisclosure = disclosing.scope_tools
        """What a scope discloses in a native mode (`scoping.ranked`)."""
        self.search_tool: BaseTool = make_search_tool()
        """The search tool sent (loaded) with `scope_tools="ranked"` in a native mode that
        discloses in the history; this middleware answers its calls within the active scope."""
        self.index = capability_index(self.catalog, lay.header)
        """The capability index layer (fixed for the middleware's lifetime)."""
        self.load_context_tool: BaseTool = make_load_context_tool(
            self.catalog,
            with_module=self.module_delivery == "load_context",
            describe_scopes=self.prompt_layout == "compact",
        )
        """The `load_context` tool the model is sent (the registered one, or a copy whose
        scope descriptions count tools learnt to write at the first request)."""
        self._registered_load_context = self.load_context_tool
        self._texts_writing = self.catalog.writing
        """The tools counted as writes in `index` and `load_context_tool`."""
        self._writes_read_from = 0
        """How many known tool objects the catalog's `writing` was last updated from."""
        self.tools = [
            self.load_context_tool,
            *(as_base_tool(t) for t in self.catalog.tool_objects.values()),
        ]
        self._name = name
        self._warned: set[str] = set()
        self._warned_contexts: set[str] = set()
        self._registered: Sequence[Any] = self.tools
        """The tools array of the latest request (what the tool hooks rank over)."""
        self._known_tools: dict[str, Any] = {t.name: t for t in self.tools}
        """Tool objects by name (registered and seen in requests): what the blast-radius rule
        reads to tell the tools that write."""
        self._closed: tuple[int, frozenset[str]] = (-1, frozenset())
        """`_code_closed` as of how many known tools."""

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    # -- pure helpers shared by the middleware hooks and the graph nodes ---------------------

    def active_scope(self, state: Mapping[str, Any]) -> str | None:
        """The scope in force for `state` (its `active_context`, else the default scope).

        Raises:
            UnknownScopeError: the state's value is no scope and `invalid_context="raise"`.
        """
        value = state.get(STATE_KEY)
        try:
            return self.catalog.resolve(value)
        except UnknownScopeError as exc:
            if self.invalid_context == "raise":
                raise
            key = repr(value)[:200]
            if key not in self._warned_contexts:
                self._warned_contexts.add(key)
                logger.warning("%s Using the default scope %r.", exc, self.catalog.default_scope)
            return self.catalog.default_scope

    def _repair(self, state: Mapping[str, Any]) -> dict[str, Any] | None:
        """The state update that replaces an invalid `active_context`, or None."""
        value = state.get(STATE_KEY)
        if value is None or value == "":
            return None
        if isinstance(value, str) and value in self.catalog.scopes:
            return None
        return {STATE_KEY: self.catalog.default_scope}

    def prompt_layers(
        self, state: Mapping[str, Any], user_prompt: str | None = None
    ) -> PromptLayers:
        """The three prompt layers the model gets for `state` (for UIs, tests and audits);
        with `module_delivery="load_context"` the module layer is the default scope's, always."""
        scope = (
            self.catalog.resolve(None)
            if self.module_delivery == "load_context"
            else self.active_scope(state)
        )
        return self._layers(scope, user_prompt)

    def _layers(self, scope: str | None, user_prompt: str | None) -> PromptLayers:
        return build_layers(
            self.catalog,
            scope,
            index=self.index,
            framework_core=self.core_prompt,
            user_prompt=user_prompt,
            layout=self.prompt_layout,
        )

    def filter_tools(
        self,
        tools: Sequence[BaseTool | dict[str, Any]],
        scope: str | None,
        opener: Opener = "application",
    ) -> list[BaseTool | dict[str, Any]]:
        """Keep the tools visible in `scope` as `opener` opened it (a scope opened by code keeps
        its tools that write out of view); provider tool dicts no scope names pass through."""
        visible = self.catalog.visible(scope)
        scoped = self.catalog.scoped_names
        kept: list[BaseTool | dict[str, Any]] = []
        always_on = self.catalog.always_on
        hidden: list[str] = []
        for tool in tools:
            tname = tool_name(tool) if isinstance(tool, dict) else tool.name
            if tname in visible:
                if tname in always_on and not isinstance(tool, dict):
                    mark_pinned(tool)  # a gate after this middleware keeps it (adapters.PINNED)
                elif not may_open(tool, opener):
                    continue  # a write of a scope code opened: the model loads it itself
                kept.append(tool)
            elif tname not in scoped:
                if isinstance(tool, dict) or self.unscoped_tools == "show":
                    kept.append(tool)
                elif tname not in self._warned:
                    hidden.append(tname)
        if hidden:
            self._warn_unscoped(hidden)
        return kept

    def _warn_unscoped(self, names: Sequence[str]) -> None:
        """One warning for every newly seen registered tool that no scope names."""
        self._warned.update(names)
        shown = ", ".join(repr(n) for n in names[:UNSCOPED_NAMES_SHOWN])
        more = len(names) - UNSCOPED_NAMES_SHOWN
        if more > 0:
            shown += f" and {more} more"
        count = "1 registered tool is" if len(names) == 1 else f"{len(names)} registered tools are"
        logger.warning(
            "%s hidden because no scope names them: %s; add them to a Scope or to always_on, "
            "or pass unscoped_tools='show'",
            count,
            shown,
        )

    def visible_tool_names(
        self, state: Mapping[str, Any], tools: Sequence[BaseTool | dict[str, Any]] | None = None
    ) -> list[str]:
        """Names of the tools the model sees in `state` (over `tools`, default: registered),
        the start set aside."""
        pool = list(tools) if tools is not None else list(self.tools)
        scope = self.active_scope(state)
        opener, _ = read_opener(state, scope)
        return [tool_name(t) for t in self.filter_tools(pool, scope, opener)]

    def opener(self, state: Mapping[str, Any]) -> Opener:
        """Who opened the scope in force for `state` (see `ScopingState.scope_opened`)."""
        return read_opener(state, self.active_scope(state))[0]

    def _remember(self, tools: Iterable[Any]) -> None:
        """Keep the tool objects of a request: the blast-radius rule reads their metadata."""
        for tool in tools:
            if isinstance(tool, BaseTool):
                self._known_tools.setdefault(tool.name, tool)

    def _follow_writes(self, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        """`request` with the current `load_context` tool. Tools registered by name arrive as
        objects with the first request: when the catalog learns that some write, the index
        and `load_context`'s scope descriptions count them instead of naming them, from that
        call on (code-written text never names a write, `core.blast_radius`)."""
        if len(self._known_tools) != self._writes_read_from:  # new tool objects: read them
            self._writes_read_from = len(self._known_tools)
            self.catalog.add_writes(self._code_closed())
        if self.catalog.writing != self._texts_writing:  # (a catalog may be shared)
            self._texts_writing = self.catalog.writing
            self.index = capability_index(self.catalog, self.layout.header)
            text = name_description(self.catalog, self.prompt_layout == "compact")
            self.load_context_tool = with_name_text(self._registered_load_context, text)
        current, registered = self.load_context_tool, self._registered_load_context
        if current is registered or not any(t is registered for t in request.tools):
            return request
        return request.override(tools=[current if t is registered else t for t in request.tools])

    def _code_closed(self) -> frozenset[str]:
        """Names of the known tools code may not open (those that write), read again only when
        new tool objects arrived (`_known_tools` only grows; every model and tool call asks)."""
        size, closed = self._closed
        if size != len(self._known_tools):
            size = len(self._known_tools)
            closed = frozenset(n for n, t in self._known_tools.items() if not may_open(t, "code"))
            self._closed = (size, closed)
        return closed

    def plan(self, request: ModelRequest[ContextT]) -> CallPlan:
        """Decide the scope of this model call and who opened it: the active one, one the
        application just set (it wins this turn), a pre-selected one (opened by code), or none
        (then the start set of reading tools is offered)."""
        state = request.state
        scope = self.active_scope(state)
        updates = self._repair(state) or {}
        opener, given = read_opener(state, scope)
        turn = current_turn(request.messages)[1]
        choice: ScopeChoice | None = None
        if not given and self._preselects(scope, request.messages):
            choice = self.start.choose(intent_text(request.messages), request.tools)
            updates[SELECTION_KEY] = {**choice.as_record(), "turn": turn}
            if choice.scope is not None and choice.scope != scope:
                scope, opener = choice.scope, "code"
                updates[STATE_KEY] = scope
        if not same_opening(state.get(OPENED_KEY), scope, opener):
            updates[OPENED_KEY] = opened_record(scope, opener, turn) if scope is not None else None
        offered: tuple[str, ...] = ()
        if scope is None and not self.disclosure_for(request).native:
            # the start set; it leaves view once a scope is loaded
            offered = tuple(self.start.offered(intent_text(request.messages), request.tools))
        if offered != start_set(state):
            updates["scope_offered"] = list(offered) or None
        return CallPlan(scope, offered, choice, updates, opener)

    def disclosure_for(self, request: ModelRequest[ContextT]) -> Disclosure:
        """The disclosure mode for this call's chat model.

        Raises:
            ValueError: the chat model cannot carry the `disclosure=` mode.
        """
        return self.disclosure.for_model(request.model)

    def _preselects(self, scope: str | None, messages: Sequence[Any]) -> bool:
        """Whether this call pre-selects: while unscoped, or at a turn's first call too."""
        mode = self.start.preselect
        if mode == "off":
            return False
        return scope is None or (mode == "every_turn" and _turn_start(messages))

    def prepare_request(
        self, request: ModelRequest[ContextT], plan: CallPlan | None = None
    ) -> ModelRequest[ContextT]:
        """Narrow `request` to the planned scope (its reading tools only, when code opened it)
        or the start set, and set the three-layer prompt (in a native `disclosure=` mode: every
        tool sent, the system prompt fixed, the scope disclosed at the tail)."""
        return self._prepare(request, plan)[0]

    def _prepared(
        self, request: ModelRequest[ContextT], plan: CallPlan
    ) -> tuple[ModelRequest[ContextT], list[BaseMessage]]:
        """The request the model gets and the disclosure pair: through `prepare_request` in
        the rewrite mode, so a subclass that overrides it is honoured."""
        if self.disclosure_for(request).native:
            return self._prepare(request, plan)
        return self.prepare_request(request, plan), []

    def _prepare(
        self, request: ModelRequest[ContextT], plan: CallPlan | None = None
    ) -> tuple[ModelRequest[ContextT], list[BaseMessage]]:
        """`prepare_request`, plus the disclosure pair to put in front of the model's reply."""
        if not self.catalog.validated:
            self.catalog.validate_tools(
                tool_name(t) for t in request.tools if not isinstance(t, dict)
            )
        self._remember(request.tools)
        request = self._follow_writes(request)
        self._registered = request.tools
        plan = plan or self.plan(request)
        disclosure = self.disclosure_for(request)
        if disclosure.native:
            return self._prepare_native(request, plan, disclosure)
        tools = self.filter_tools(request.tools, plan.scope, plan.opener)
        if plan.offered:
            tools = with_start_set(request.tools, tools, plan.offered)
        user_prompt = request.system_message.text if request.system_message is not None else None
        module_scope = (
            self.catalog.resolve(None) if self.module_delivery == "load_context" else plan.scope
        )
        layers = self._layers(module_scope, user_prompt)
        self._emit(request, plan, tools)
        overrides: dict[str, Any] = {}
        choice = visible_tool_choice(request.tool_choice, tools)
        if choice != request.tool_choice:
            logger.debug("tool_choice %r is hidden in scope %r", request.tool_choice, plan.scope)
            overrides["tool_choice"] = choice
        if plan.updates and isinstance(request.state, Mapping):
            # inner middleware read the state this call is planned for
            overrides["state"] = {**request.state, **plan.updates}
        return request.override(
            tools=tools, system_message=SystemMessage(layers.render()), **overrides
        ), []

    def _prepare_native(
        self, request: ModelRequest[ContextT], plan: CallPlan, disclosure: Disclosure
    ) -> tuple[ModelRequest[ContextT], list[BaseMessage]]:
        """Every tool a scope or always-on names, in the mode's stable shape; the visible set
        in `tool_choice` or disclosed by a `load_context` pair at the tail; the system prompt
        with the default scope's module (the others travel in `load_context` results)."""
        kept = self.filter_tools(request.tools, plan.scope, plan.opener)
        visible = [tool_name(t) for t in kept if not isinstance(t, dict)]
        loaded = self._loaded(kept)
        sent = [
            t
            for t in request.tools
            if isinstance(t, dict) or t.name in loaded or self.catalog.is_scoped(t.name)
        ]
        ranked = self.ranks(disclosure)
        if ranked:
            loaded |= {SEARCH_TOOL}
            if SEARCH_TOOL not in {tool_name(t) for t in sent}:
                sent.append(self.search_tool)
        shaped = disclosure.shape(
            sent,
            visible=visible,
            loaded=loaded,
            tool_choice=request.tool_choice,
            groups=scope_groups(self.catalog),
        )
        new = missing(disclosure, request.messages, visible, loaded)
        if ranked:
            new = self._ranked_new(request, plan, visible, new)
        pair = self._pair(request, plan, disclosure, visible, new, ranked)
        user_prompt = request.system_message.text if request.system_message is not None else None
        layers = self._layers(self.catalog.resolve(None), user_prompt)
        self._emit(request, plan, kept, disclosure.mode)
        view = {"mode": disclosure.mode, "visible": visible, "loaded": sorted(loaded)}
        base = request.state if isinstance(request.state, Mapping) else {}
        state = {**base, **plan.updates, VISIBLE_KEY: view}
        overrides: dict[str, Any] = {"state": state}
        if pair:
            overrides["messages"] = [*request.messages, *pair]
        narrowed = request.override(
            tools=shaped.tools,
            tool_choice=shaped.tool_choice,
            system_message=SystemMessage(layers.render()),
            **overrides,
        )
        return narrowed, pair

    def ranks(self, disclosure: Disclosure) -> bool:
        """Whether a scope discloses only its ranked tools in `disclosure`'s mode."""
        return disclosure.in_history and disclosure.native and self.scope_disclosure == "ranked"

    def _ranked_new(
        self,
        request: ModelRequest[ContextT],
        plan: CallPlan,
        visible: Sequence[str],
        new: Sequence[str],
    ) -> list[str]:
        """Of `new` (visible, not disclosed yet), those the request names or ranks best, at a
        user turn's first call or when the scope was opened for this call; else none."""
        if plan.scope is None or not new:
            return []
        if not (_turn_start(request.messages) or OPENED_KEY in plan.updates):
            return []
        intent = intent_text(request.messages)
        own = [n for n in self.catalog.scopes[plan.scope].tools if n in set(visible)]
        best = ranked_names(self.start, intent, own, request.tools, k=SCOPE_DISCLOSE_K)
        return [n for n in best if n in set(new)]

    def _pair(
        self,
        request: ModelRequest[ContextT],
        plan: CallPlan,
        disclosure: Disclosure,
        visible: Sequence[str],
        new: Sequence[str],
        ranked: bool,
    ) -> list[BaseMessage]:
        """The pair disclosing `new` at the tail: a `load_context` pair (with the module) when
        the scope was opened for this call, or always without ranking; else a search pair
        for the new turn's request."""
        if not new or plan.scope is None:
            return []
        if not ranked or OPENED_KEY in plan.updates:
            call_id = pair_id(request.messages, f"{LOAD_CONTEXT}:{plan.scope}")
            shown = list(new) if ranked else list(visible)
            text = opened_text(self.catalog, plan.scope, shown, plan.opener)
            if ranked:
                text = with_ranked_text(text, self.catalog, plan.scope, shown)
            args = {"name": plan.scope}
            return disclosure.announce(
                new, tool=LOAD_CONTEXT, args=args, text=text, call_id=call_id
            )
        intent = intent_text(request.messages)
        call_id = pair_id(request.messages, SEARCH_TOOL + ":" + ",".join(new))
        text = scope_search_payload(intent, plan.scope, new)
        return disclosure.announce(
            new, tool=SEARCH_TOOL, args={"query": intent}, text=text, call_id=call_id
        )

    def _loaded(self, kept: Sequence[BaseTool | dict[str, Any]]) -> frozenset[str]:
        """Names a native mode always sends loaded: `load_context`, always-on tools, and the
        unscoped tools shown by policy."""
        names = {tool_name(t) for t in kept if not isinstance(t, dict)}
        unscoped = {n for n in names if not self.catalog.is_scoped(n)}
        return frozenset(self.catalog.always_on) | {LOAD_CONTEXT} | unscoped

    def _emit(
        self,
        request: ModelRequest[ContextT],
        plan: CallPlan,
        tools: Sequence[Any],
        mode: str = "rewrite",
    ) -> None:
        if not self.emit_events or request.runtime is None:
            return
        writer = getattr(request.runtime, "stream_writer", None)
        if writer is None:
            return
        event: dict[str, Any] = {
            "type": "scope",
            "active_context": plan.scope,
            "opened_by": plan.opener if plan.scope is not None else None,
            "tools": [tool_name(t) for t in tools],
            "registered_tools": len(request.tools),
            "disclosure": mode,
        }
        if plan.choice is not None:
            event["preselect"] = {**plan.choice.as_record(), "why": plan.choice.explain()}
        if plan.offered:
            event["start"] = {"mode": self.start.start, "offered": list(plan.offered)}
        writer(event)

    def review_tool_call(self, request: ToolCallRequest) -> ToolMessage | None:
        """A refusal `ToolMessage` when the call is outside what the model was shown (another
        scope's tool, or a tool that writes in a scope code opened), else None."""
        call = request.tool_call
        state = request.state if isinstance(request.state, Mapping) else {}
        if request.tool is not None:
            self._remember([request.tool])
        disclosure = self.disclosure.last
        if disclosure is not None and disclosure.in_history:
            if call["name"] == SEARCH_TOOL and request.tool is None:
                if self.ranks(disclosure):
                    return self.search(request, disclosure)
                return None  # a gate after this middleware added and answers it
            unseen = self._undisclosed(disclosure, call["name"], state)
            if unseen is not None:
                return refusal_message(call, unseen)
        if self.adoption(request) is not None:
            return None
        scope = self.active_scope(state)
        extra: frozenset[str] = frozenset()
        if (
            self.unscoped_tools == "show"
            and request.tool is not None
            and not self.catalog.is_scoped(call["name"])
        ):
            extra = frozenset({call["name"]})
        closed = self._code_closed()
        extra |= frozenset(start_set(state)) - closed  # offered while unscoped
        hidden = closed_writes(self.catalog, scope, read_opener(state, scope)[0], self._known_tools)
        siblings = sibling_calls(state.get("messages", []), call.get("id")) or [dict(call)]
        payload = review_call(
            self.catalog, scope, call, siblings, extra_visible=extra, hidden=hidden
        )
        if payload is None:
            return None
        return refusal_message(call, payload)

    def _undisclosed(
        self, disclosure: Disclosure, name: str, state: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The refusal of a call to a scoped tool the conversation never disclosed, else None."""
        if name == LOAD_CONTEXT or not self.catalog.is_scoped(name):
            return None
        messages = state.get("messages", [])
        if name in (disclosure.disclosed(messages) or ()):
            return None
        return undisclosed_payload(name, self.visible_tool_names(state))

    def adoption(self, request: ToolCallRequest) -> Adoption | None:
        """Whether this call loads a scope by being made (a tool the start set offered, or
        another scope's tool with `on_foreign_tool="switch"`; tools that read only), and
        whether it records the switch."""
        state = request.state if isinstance(request.state, Mapping) else {}
        scope = self.active_scope(state)
        offered = frozenset(start_set(state))
        siblings = sibling_calls(state.get("messages", []), request.tool_call.get("id"))
        return adopted_scope(
            self.catalog,
            scope,
            request.tool_call,
            siblings or [dict(request.tool_call)],
            offered=offered,
            switch=self.on_foreign_tool == "switch",
            writers=self._code_closed(),
        )

    def warm_up(self, tools: Sequence[Any] | None = None) -> None:
        """Read the tools' schemas and rank them once now (with MiniLM, embedding the new
        ones) instead of at the first model call, which with thousands of tools takes
        seconds. `tools`: the agent's tools (default: the scopes' tool objects)."""
        objects = list(tools) if tools is not None else self.tools
        self.start.choose("warm up", objects)

    # -- LangChain hooks --------------------------------------------------------------------

    @override
    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: ModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT]:
        """Call the model with the scoped tools and the three-layer prompt."""
        plan = self.plan(request)
        narrowed, pair = self._prepared(request, plan)
        mode = self.disclosure_for(request)
        reply = read_reply(mode, handler(on_wire(mode, narrowed)))
        return self._finish(request, with_pair(reply, pair), plan)

    @override
    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: AsyncModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT]:
        """Async form of `wrap_model_call`."""
        plan = await asyncio.to_thread(self.plan, request) if self.start.needs_ranking else None
        plan = plan or self.plan(request)
        narrowed, pair = self._prepared(request, plan)
        mode = self.disclosure_for(request)
        reply = read_reply(mode, await handler(on_wire(mode, narrowed)))
        return self._finish(request, with_pair(reply, pair), plan)

    @override
    def tool_result(self, request: ToolCallRequest, result: ToolResult) -> ToolResult:
        """The tool's result, plus the scope switch when the call loaded its scope (in a
        native mode, a `load_context` result discloses the scope's tools and module)."""
        state = request.state if isinstance(request.state, Mapping) else {}
        turn = current_turn(state.get("messages", []))[1]
        disclosure = self.disclosure.last
        if (
            disclosure is not None
            and disclosure.native
            and request.tool_call["name"] == LOAD_CONTEXT
        ):
            messages = state.get("messages", [])
            result = self._disclose_load(disclosure, request.tool_call, result, messages)
        return with_switch(result, self.adoption(request), request.tool_call, turn)

    def _disclose_load(
        self,
        disclosure: Disclosure,
        call: Mapping[str, Any],
        result: ToolResult,
        messages: Sequence[Any] = (),
    ) -> ToolResult:
        """A `load_context` result carrying the scope's module and, where the mode discloses
        in the history, its tools (all of them: the model opened the scope) that the thread
        has not disclosed yet: a definition already expanded stays in the prefix, and
        referencing it again would bill it again on every later call."""
        args = call.get("args")
        scope = args.get("name") if isinstance(args, Mapping) else None
        if not isinstance(scope, str) or scope not in self.catalog.scopes:
            return result
        loaded = frozenset(self.catalog.always_on) | {LOAD_CONTEXT}
        own = list(self.catalog.scopes[scope].tools)
        ranked = self.ranks(disclosure)
        if ranked:
            own = ranked_names(
                self.start,
                intent_text(messages),
                own,
                self._registered,
                k=SCOPE_DISCLOSE_K,
            )
        if disclosure.in_history:
            loaded |= disclosure.disclosed(messages) or frozenset()
            names = [n for n in own if n not in loaded]
        else:
            names = []

        def content(tools: list[str], text: Any) -> Any:
            text = with_module_text(text, self.catalog, scope)
            if ranked:
                text = with_ranked_text(text, self.catalog, scope, own)
            return disclosure.content(tools, text)

        return disclosed_load(result, str(call.get("id")), names, content)

    def search(self, request: ToolCallRequest, disclosure: Disclosure) -> ToolMessage:
        """The answer to a search call with `scope_tools="ranked"`: within the active
        scope, the tools the query names exactly, else the ranker's best for it, those not yet
        disclosed referenced in the mode's form (a scope code opened: never its tools that
        write, which the model reaches by loading the scope itself)."""
        call = request.tool_call
        state = request.state if isinstance(request.state, Mapping) else {}
        args = call.get("args")
        query = str(args.get("query") or "") if isinstance(args, Mapping) else ""
        scope = self.active_scope(state)
        if scope is None:
            text = scope_search_payload(query, None, [])
            return ToolMessage(text, tool_call_id=call["id"], name=SEARCH_TOOL)
        own = list(self.catalog.scopes[scope].tools)
        opener = read_opener(state, scope)[0]
        closed = self._code_closed() if opener == "code" else frozenset()
        found = searched_names(
            self.start,
            query,
            own,
            self._registered,
            k=SCOPE_DISCLOSE_K,
            allowed=[n for n in own if n not in closed],
        )
        seen = disclosure.disclosed(state.get("messages", [])) or frozenset()
        new = [n for n in found if n not in seen and n not in self.catalog.always_on]
        text = scope_search_payload(query, scope, new, writes_held=bool(closed & set(own)))
        content = disclosure.content(new, text)
        return ToolMessage(content, tool_call_id=call["id"], name=SEARCH_TOOL)

    def _finish(self, request: ModelRequest[ContextT], response: Any, plan: CallPlan) -> Any:
        """Repair the model's tool calls (unique ids, invalid JSON answered) and write the
        plan's state (a pre-selected scope and who opened it, the start set, a repaired
        `active_context`)."""
        response = repair_response(response, thread_call_ids(request.messages))
        update = plan.updates
        if not update:
            return response
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        return ExtendedModelResponse(model_response=response, command=Command(update=dict(update)))


def with_start_set(
    registered: Sequence[BaseTool | dict[str, Any]],
    base: Sequence[BaseTool | dict[str, Any]],
    offered: Sequence[str],
) -> list[BaseTool | dict[str, Any]]:
    """The unscoped `base` (always-on tools and the like) plus the `offered` tools, in
    registration order."""
    names, kept = set(offered), {id(t) for t in base}
    return [t for t in registered if id(t) in kept or (not isinstance(t, dict) and t.name in names)]


def start_set(state: Mapping[str, Any]) -> tuple[str, ...]:
    """The tools the start mode offered while no scope was active (`scope_offered`), as names."""
    return tuple(names_from(state.get("scope_offered")))


def _turn_start(messages: Sequence[Any]) -> bool:
    """Whether this is the first model call of a user turn (the last message is the user's)."""
    return bool(messages) and is_user_turn(messages[-1])


def with_switch(
    result: ToolResult, adoption: Adoption | None, call: Mapping[str, Any], turn: str = "-1:"
) -> ToolResult:
    """The tool's result, plus the scope switch when this call is the one that records it: the
    scope is opened by code (in user turn `turn`), so its tools that write stay out of view."""
    if adoption is None or not adoption.records:
        return result
    switch = {STATE_KEY: adoption.scope, OPENED_KEY: opened_record(adoption.scope, "code", turn)}
    if isinstance(result, ToolMessage):
        return Command(update={"messages": [result], **switch})
    update = result.update
    if isinstance(update, Mapping) and STATE_KEY not in update:
        merged = {**update, **switch}
        return Command(graph=result.graph, update=merged, resume=result.resume, goto=result.goto)
    logger.debug("tool %r returned its own state update; scope not switched", call.get("name"))
    return result
