"""`AttentionScopingMiddleware`: on every model call, only the active scope's tools and prompt;
on every tool call, only what that reply was shown.

Defaults: the `compact` layout (your system prompt alone; `load_context` describes the scopes
and returns each one's module), the `LexicalSelector` at the first call of each turn, and the
`rewrite` disclosure (only the callable tools are sent).

Who may open what (`attention_scoping.risk`): the model's own `load_context` and the
application's `active_context` open a whole scope. A scope the selector opens (code) shows only
its declared reads, so a tool nobody classified never comes into view unless the model asks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, NamedTuple, NotRequired, Protocol, runtime_checkable

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
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langgraph.types import Command

from attention_scoping.errors import ScopeConfigError, check_choice, listing
from attention_scoping.gate import Record, clipped, refused, repaired, review, stamp
from attention_scoping.gate import thread_call_ids as taken_ids
from attention_scoping.load_context import (
    OPENED_KEY,
    ScopeOpened,
    make_load_context_tool,
    opened_record,
)
from attention_scoping.messages import current_turn, turn_starts, user_text
from attention_scoping.prompt import LAYOUTS, Layout, build_layers
from attention_scoping.risk import OPENERS, Opener, unclassified
from attention_scoping.scopes import (
    STATE_KEY,
    Scope,
    ScopeCatalog,
    ToolLike,
    ToolScopes,
    tool_object_name,
)
from attention_scoping.select import SELECTION_KEY, LexicalSelector, Selection, Selector

logger = logging.getLogger("attention_scoping")

ToolResult = ToolMessage | Command[Any]


class ScopingState(AgentState[ResponseT]):
    """The keys scoping reads and writes: `active_context` (the scope in force; set it in the
    input to choose one), who opened it (`scope_opened`) and the turn's selection."""

    active_context: NotRequired[str | None]
    scope_opened: NotRequired[Annotated[ScopeOpened | None, OmitFromInput]]
    scope_selection: NotRequired[Annotated[dict[str, Any] | None, OmitFromInput]]


class Disclosed(NamedTuple):
    """A request ready to send, and the name of the mode that disclosed its tools."""

    request: ModelRequest[Any]
    mode: str


@runtime_checkable
class Disclosure(Protocol):
    """How the callable tools reach the provider. It may send more tools than are callable
    (say, deferred), never make more callable: the gate reads `shown` alone."""

    def disclose(self, request: ModelRequest[Any], shown: Sequence[str]) -> Disclosed:
        """`request` with its tools disclosed for a call whose callable tools are `shown`."""
        ...


class Rewrite:
    """The default disclosure: send only the callable tools (a `tool_choice` naming a hidden
    tool falls back to `"auto"`). Provider tool dicts (a server-side web search, say) pass
    through as given: they run at the provider, never through the agent's tool node."""

    def disclose(self, request: ModelRequest[Any], shown: Sequence[str]) -> Disclosed:
        """`request` with `tools` narrowed to `shown`."""
        keep = set(shown)
        tools = [t for t in request.tools if isinstance(t, dict) or t.name in keep]
        choice = request.tool_choice
        named = (
            choice.get("name") or (choice.get("function") or {}).get("name")
            if isinstance(choice, dict)
            else choice
        )
        if (
            isinstance(named, str)
            and named not in {"auto", "any", "none", "required"}
            and named not in keep
        ):
            choice = "auto"
        return Disclosed(request.override(tools=tools, tool_choice=choice), "rewrite")


@dataclass(frozen=True)
class Plan:
    """What one model call shows: the scope in force, who opened it, the callable tool names,
    the turn's selection, and the state update that goes with the reply."""

    scope: str | None
    opened_by: Opener
    tools: tuple[str, ...]
    selection: Mapping[str, Any] | None = None
    """The turn's selection record (`Selection.as_record()` plus its `turn`), if any."""
    update: dict[str, Any] = field(default_factory=dict)


def _opener(state: Mapping[str, Any], active: object, turn: str) -> tuple[Opener, str | None]:
    """Who opened the scope in force, and in which turn (None: not recorded yet, so opened by
    the application now: it set `active_context` in the input or with `update_state`).

    A state that lost the opening record while the turn's selection chose that scope counts the
    scope as opened by code: what nobody recorded never gains writes."""
    opened = state.get(OPENED_KEY)
    if (
        isinstance(opened, Mapping)
        and opened.get("scope") == active
        and opened.get("by") in OPENERS
    ):
        return opened["by"], opened.get("turn")
    picked = state.get(SELECTION_KEY)
    if isinstance(picked, Mapping) and picked.get("turn") == turn and picked.get("scope") == active:
        return "code", turn
    return "application", None


class AttentionScopingMiddleware(AgentMiddleware[ScopingState[ResponseT], ContextT, ResponseT]):
    """Show the model only the active scope's tools plus `load_context` and the always-on tools,
    lay out the system prompt, and refuse any tool call the reply was not shown.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping import AttentionScopingMiddleware, Scope

        scoping = AttentionScopingMiddleware(
            [Scope("billing", "invoices and refunds", [get_invoice, refund], reads=[get_invoice]),
             Scope("support", "tickets", [open_ticket])],
        )
        agent = create_agent(model, tools=[get_invoice, refund, open_ticket], middleware=[scoping])
        ```
    """

    state_schema = ScopingState  # type: ignore[assignment]

    def __init__(
        self,
        scopes: Sequence[Scope] | ToolScopes | ScopeCatalog,
        *,
        always_on: Iterable[str | ToolLike] = (),
        default_scope: str | None = None,
        selector: Selector | None = LexicalSelector(),  # noqa: B008 - stateless, shared
        layout: Layout = "compact",
        disclosure: Disclosure = Rewrite(),  # noqa: B008 - stateless, shared
        name: str = "AttentionScopingMiddleware",
    ) -> None:
        """Validate the scopes and options.

        Args:
            scopes: `Scope` objects, a `TOOL_SCOPES` dict (name -> tool names), or a catalog.
            always_on: Tools shown in every scope (the application chose them, so they show
                whatever their risk).
            default_scope: The scope in force while `active_context` is unset.
            selector: Chooses a scope at the first call of each turn (None: never; the model
                navigates alone). What it opens shows declared reads only.
            layout: `compact` (default), `layered` or `stable` (see `attention_scoping.prompt`).
            disclosure: How the callable tools are sent (default: only them).
            name: The middleware's name; it also keys the record on each reply.

        Raises:
            ScopeConfigError: a bad scope, tool, layout, selector or disclosure.
        """
        super().__init__()
        check_choice("layout", layout, LAYOUTS)
        if selector is not None and not isinstance(selector, Selector):
            msg = f"selector must have a select(text, catalog) method or be None, not {selector!r}"
            raise ScopeConfigError(msg)
        if not isinstance(disclosure, Disclosure):
            msg = f"disclosure must have a disclose(request, shown) method, not {disclosure!r}"
            raise ScopeConfigError(msg)
        if isinstance(scopes, ScopeCatalog):
            if always_on or default_scope is not None:
                msg = "pass always_on and default_scope to the ScopeCatalog, not beside it"
                raise ScopeConfigError(msg)
            self.catalog = scopes
        else:
            self.catalog = ScopeCatalog(scopes, always_on=always_on, default_scope=default_scope)
        self.selector = selector
        self.layout = layout
        self.disclosure = disclosure
        self._name = name
        self.tools = [
            make_load_context_tool(self.catalog, layout),
            *(
                t if isinstance(t, BaseTool) else as_tool(t)
                for t in self.catalog.tool_objects.values()
            ),
        ]
        """`load_context` and the scopes' tool objects: `create_agent` registers them, so an
        agent needs no `tools=` of its own for them."""
        self._seen: frozenset[str] = frozenset()
        self._lock = threading.Lock()
        self._log_unclassified(self.catalog.tool_objects)

    @property
    def name(self) -> str:
        """The middleware's name (unique per agent; the key of its records)."""
        return self._name

    def _log_unclassified(self, tools: Mapping[str, Any]) -> None:
        always = set(self.catalog.always_on)
        scoped = {
            n: t for n, t in tools.items() if n in self.catalog.scoped_names and n not in always
        }
        names = unclassified(scoped, self.catalog.declared_reads)
        if names:
            logger.info(
                "%s: %d tool(s) nobody declared a read, so code never opens them (the model "
                "can, with load_context): %s. Declare reads with metadata={'risk': 'read'} "
                "or Scope(..., reads=[...]).",
                self.name,
                len(names),
                ", ".join(names),
            )

    def _registered(self, tools: Sequence[Any]) -> dict[str, Any]:
        """The request's tool objects by name; checks the catalog against them once, and
        names tools no scope lists (hidden) once."""
        objects = {tool_object_name(t): t for t in tools if not isinstance(t, dict)}
        if self._seen.issuperset(objects):
            return objects
        with self._lock:
            if not self.catalog.checked:
                self.catalog.check_tools(objects)
            new = {n: t for n, t in objects.items() if n not in self.catalog.tool_objects}
            self._log_unclassified(new)
            outside = sorted(set(objects) - self.catalog.scoped_names - self._seen)
            if outside:
                logger.warning(
                    "%s: tools no scope or always_on lists are never shown: %s",
                    self.name,
                    ", ".join(outside),
                )
            self._seen = self._seen | frozenset(objects)
        return objects

    def plan(self, state: Mapping[str, Any], tools: Sequence[Any] = ()) -> Plan:
        """What the next model call shows for `state` (pure: reads state, writes nothing).

        Raises:
            UnknownScopeError: `active_context` names no scope.
        """
        messages = list(state.get("messages") or [])
        objects = self._registered(tools) if tools else dict(self.catalog.tool_objects)
        active = state.get(STATE_KEY)
        scope = self.catalog.resolve(active)
        turn = current_turn(messages)[1]
        by, since = _opener(state, active, turn)
        set_now = active not in (None, "") and by == "application" and since in (None, turn)
        update: dict[str, Any] = {}
        if since is None and active not in (None, ""):
            update[OPENED_KEY] = opened_record(scope, "application", turn)
        selection: Mapping[str, Any] | None = None
        if self.selector is not None and turn_starts(messages) and not set_now:
            picked = self._select(self.selector, user_text(messages), objects)
            selection = update[SELECTION_KEY] = {**picked.as_record(), "turn": turn}
            if picked.scope is not None and picked.scope != scope:
                scope, by = picked.scope, "code"
                update[STATE_KEY] = scope
                update[OPENED_KEY] = opened_record(scope, "code", turn)
        elif (
            isinstance(state.get(SELECTION_KEY), Mapping)
            and state[SELECTION_KEY].get("turn") == turn
        ):
            selection = state[SELECTION_KEY]
        names = list(self.catalog.visible(scope))
        if by == "code":
            names = [
                n
                for n in names
                if n in self.catalog.always_on or self.catalog.is_read(n, objects.get(n))
            ]
        if scope is None and selection is not None:  # a close call: its reads, checked again
            names += [
                n
                for n in selection.get("reads") or ()
                if isinstance(n, str) and n not in names and self.catalog.is_read(n, objects.get(n))
            ]
        keep = set(names)
        shown = tuple(n for n in objects if n in keep)
        return Plan(scope, by, shown, selection, update)

    def _select(self, selector: Selector, text: str, objects: Mapping[str, Any]) -> Selection:
        """The selector's choice, failing closed: only declared reads are kept among the reads
        it reports, and a scope it names must exist.

        Raises:
            ScopeConfigError: the selector named a scope the catalog does not have.
        """
        picked = selector.select(text, self.catalog)
        if picked.scope is not None and picked.scope not in self.catalog.scopes:
            msg = (
                f"selector {type(selector).__name__} chose unknown scope {picked.scope!r}; "
                f"valid scopes: {listing(self.catalog.scopes)}"
            )
            raise ScopeConfigError(msg)
        reads = tuple(n for n in picked.reads if self.catalog.is_read(n, objects.get(n)))
        return picked if reads == picked.reads else replace(picked, reads=reads)

    def prompt(self, scope: str | None, system_prompt: str | None) -> str:
        """The system prompt for `scope` under the layout (your prompt kept whole)."""
        return build_layers(self.catalog, scope, self.layout, system_prompt).render()

    def _prepare(self, request: ModelRequest[Any]) -> tuple[Disclosed, Plan]:
        plan = self.plan(request.state, request.tools)
        prompt = self.prompt(plan.scope, request.system_prompt)
        base = request.override(system_message=SystemMessage(prompt) if prompt else None)
        if plan.update:
            base = base.override(state={**request.state, **plan.update})  # type: ignore[typeddict-item]
        return self.disclosure.disclose(base, plan.tools), plan

    @staticmethod
    def _emit(request: ModelRequest[Any], sent: Disclosed, plan: Plan) -> None:
        """A `{"type": "scope", ...}` custom stream event per model call: the scope, who opened
        it, the callable tools, the disclosure mode and the turn's selection."""
        writer = getattr(request.runtime, "stream_writer", None)
        if writer is None:
            return
        event: dict[str, Any] = {
            "type": "scope",
            "active_context": plan.scope,
            "opened_by": plan.opened_by if plan.scope is not None else None,
            "tools": list(plan.tools),
            "disclosure": sent.mode,
        }
        if plan.selection is not None:
            event["selection"] = dict(plan.selection)
        writer(event)

    def _finish(
        self, request: ModelRequest[Any], response: Any, sent: Disclosed, plan: Plan
    ) -> Any:
        record: Record = {
            "tools": list(plan.tools),
            "scope": plan.scope,
            "opened_by": plan.opened_by,
            "disclosure": sent.mode,
        }
        command = response.command if isinstance(response, ExtendedModelResponse) else None
        inner = response.model_response if isinstance(response, ExtendedModelResponse) else response
        if isinstance(inner, AIMessage):
            inner = ModelResponse(result=[inner])
        taken = taken_ids(request.messages)
        result = [
            stamp(repaired(m, taken), self.name, record) if isinstance(m, AIMessage) else m
            for m in inner.result
        ]
        out = ModelResponse(result=result, structured_response=inner.structured_response)
        theirs = command.update if command is not None and isinstance(command.update, dict) else {}
        update = {**plan.update, **theirs}
        if not update:
            return out
        return ExtendedModelResponse(model_response=out, command=Command(update=update))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]
    ) -> Any:
        """Send the planned tools and prompt; stamp the reply with what it could call."""
        sent, plan = self._prepare(request)
        self._emit(request, sent, plan)
        return self._finish(request, handler(sent.request), sent, plan)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[Any]]
    ) -> Any:
        """Async twin of `wrap_model_call`."""
        sent, plan = self._prepare(request)
        self._emit(request, sent, plan)
        return self._finish(request, await handler(sent.request), sent, plan)

    def review(self, request: ToolCallRequest) -> ToolMessage | None:
        """The refusal of a call its reply's record does not allow, else None."""
        messages = request.state.get("messages", []) if isinstance(request.state, Mapping) else []
        payload = review(request.tool_call, messages, self.name, self.catalog)
        return None if payload is None else refused(request.tool_call, payload)

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        """Run the call only when its reply's record allows it; cut an oversized result."""
        refusal = self.review(request)
        if refusal is not None:
            return refusal
        result = handler(request)
        return clipped(result) if isinstance(result, ToolMessage) else result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async twin of `wrap_tool_call`."""
        refusal = self.review(request)
        if refusal is not None:
            return refusal
        result = await handler(request)
        return clipped(result) if isinstance(result, ToolMessage) else result
