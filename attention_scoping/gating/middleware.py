"""Tool Attention middleware: per model call, full schemas only for the tools the intent needs."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.adapters import hooks
from attention_scoping.adapters.hygiene import repair_response, thread_call_ids
from attention_scoping.adapters.refusals import RefusesToolCalls, refusal_message
from attention_scoping.adapters.tools import is_pinned, tool_name, visible_tool_choice
from attention_scoping.common.blast_radius import may_open
from attention_scoping.common.messages import intent_text, is_user_turn
from attention_scoping.common.option_groups import regroup, resolve_moved
from attention_scoping.common.options import check_at_least
from attention_scoping.common.tokens import get_counter
from attention_scoping.common.tool import summarize
from attention_scoping.disclosure.base import (
    SEARCH_TOOL,
    VISIBLE_KEY,
    Disclosure,
    DisclosureSetting,
)
from attention_scoping.disclosure.tail import (
    make_search_tool,
    missing,
    on_wire,
    pair_id,
    read_reply,
    turn_disclosed,
    with_pair,
)
from attention_scoping.gating.disclosure import (
    PoolMode,
    not_available_payload,
    pool_text,
    precondition_payload,
    unknown_tool_payload,
)
from attention_scoping.gating.facts import FactsMemo, ToolFacts
from attention_scoping.gating.gate import (
    Decision,
    GateInputs,
    NameMatcher,
    decide,
    requested_tools,
    turn_key,
    used_tools,
)
from attention_scoping.gating.index import ToolIndex
from attention_scoping.gating.options import DEFAULT_K as DEFAULT_K
from attention_scoping.gating.options import DEFAULT_POOL_BUDGET as DEFAULT_POOL_BUDGET
from attention_scoping.gating.options import (
    DEFAULT_PROMOTION,
    DEFAULT_SUMMARY_POOL,
    MOVED,
    POOL_PRESETS,
    PROMOTION_PRESETS,
    PoolPreset,
    Promotion,
    PromotionPreset,
    SummaryPool,
)
from attention_scoping.gating.options import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from attention_scoping.gating.options import DecidePer as DecidePer
from attention_scoping.gating.preconditions import Precondition, unmet, validate
from attention_scoping.gating.ranking import RankerSpec, build_ranker
from attention_scoping.gating.search import search_payload, search_tools
from attention_scoping.gating.state import GateState
from attention_scoping.scoping.catalog import LOAD_CONTEXT

if TYPE_CHECKING:
    from attention_scoping.gating.cache import VectorCache

logger = logging.getLogger(__name__)

SEARCHABLE = "searchable"
"""Key of `gate_trace` holding, in a native mode with the search tool, what it may load."""

TRACE_DEPTH = 3
"""The stored trace keeps every shown tool and hidden ones ranked up to TRACE_DEPTH x k."""


def _fingerprint(names: Sequence[str]) -> str:
    """A short, stable identifier of a candidate list (kept in state instead of the list)."""
    return hashlib.sha256("\x00".join(names).encode()).hexdigest()[:16]


def _upstream(view: object) -> tuple[frozenset[str], frozenset[str]] | None:
    """(names a scoping middleware before this one shows, those it keeps loaded) from its
    `VISIBLE_KEY` view, or None without one."""
    if not isinstance(view, Mapping):
        return None
    loaded = frozenset(view.get("loaded") or ())
    return frozenset(view.get("visible") or ()) | loaded, loaded


class ToolAttentionMiddleware(
    RefusesToolCalls, AgentMiddleware[GateState[ResponseT], ContextT, ResponseT]
):
    """Rank tools by the user's intent and send full schemas only for the top ones.

    Per model call: candidates are the tools in the request (after scoping, if the scoping
    middleware is listed before this one). Tools whose preconditions fail are hidden; pinned tools
    (`load_context` at least) are always kept; tools the user names, tools the model asked for
    this turn, and tools used in the current task are promoted; the rest are ranked by similarity
    of their text to the user's latest message, and the top `k` above `threshold` are sent. A
    call to a tool that was not sent is refused with a structured error and never runs; if the
    tool is known, its summary is returned and its schema is sent on the next step.

    Blast radius (`core.blast_radius`): what the gate promotes on its own (ranking, a name in
    the user's message, all candidates fitting within k) is only tools that read. A tool that
    writes is sent when pinned, or once the model asked for it: it calls the tool (the summary
    pool lists it), is refused, and gets its schema on the next step; a write it used earlier in
    the task stays (sticky).

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping import AttentionScopingMiddleware, ToolAttentionMiddleware

        gate = ToolAttentionMiddleware(k=5, preconditions={"logout": {"authenticated": True}})
        agent = create_agent(model, tools=many_tools, middleware=[gate])
        # with scopes: middleware=[AttentionScopingMiddleware(scopes), gate]
        ```
    """

    state_schema = GateState  # type: ignore[assignment]

    def __init__(
        self,
        *,
        ranker: RankerSpec = "default",
        k: int = DEFAULT_K,
        promotion: Promotion | PromotionPreset = DEFAULT_PROMOTION,
        summary_pool: SummaryPool | PoolPreset = DEFAULT_SUMMARY_POOL,
        pinned: Iterable[str] = (),
        preconditions: Mapping[str, Precondition] | None = None,
        tools: Iterable[BaseTool] | None = None,
        cache: VectorCache | None = None,
        emit_events: bool = True,
        name: str | None = None,
        **deprecated: Any,
    ) -> None:
        """Configure the gate.

        Args:
            ranker: `"default"` (MiniLM + BM25 hybrid; BM25 alone with a warning when the `gate`
                extra is missing), `"hybrid"`, `"dense"`, `"bm25"`, an `Encoder`, a LangChain
                `Embeddings`, or any `Ranker`.
            k: Similarity-ranked tools per call (named and requested tools take slots first).
            promotion: What else is promoted and how often the gate decides: a
                `Promotion(threshold=, intent_turns=, sticky_turns=, detect_names=,
                decide_per=)` or a preset, `"per_call"` (default) or `"per_turn"` (decide once
                per user turn, so a provider's prompt cache keeps the turn's prefix).
            summary_pool: One-line summaries of the tools held back: a
                `SummaryPool(mode, budget_tokens=)` or a mode, `"auto"` (this call's
                candidates, if within the budget; default), `"scope"`, `"catalog"` (every tool
                the gate knows) or `"off"`.
            pinned: Tools always sent, besides `load_context` and tools whose metadata says
                `pinned=True` (the scoping middleware marks its always-on tools so).
            preconditions: `{tool: callable(state) -> bool | {"state_key": value}}`; a tool's
                `metadata["preconditions"]` works too.
            tools: Tools to index up front (also the `catalog` pool before they are seen).
            cache: Where tool vectors are cached (default `~/.cache/attention-scoping`).
            emit_events: Write a `{"type": "gate", ...}` custom stream event per model call.
            name: Middleware name, to use two gates in one agent.
            **deprecated: The keyword options of 0.1 that moved into `promotion`
                (`threshold`, `intent_turns`, `sticky_turns`, `detect_names`, `decide_per`) and
                `summary_pool` (`pool_budget_tokens`): accepted for one release with a
                `DeprecationWarning` naming the new spelling.

        Raises:
            ValueError: a bad `k`, preset, option value, ranker or precondition, or options
                that contradict each other.
            TypeError: A keyword argument that does not exist.
        """
        super().__init__()
        moved = regroup(type(self).__name__, deprecated, MOVED)
        promo = resolve_moved("promotion", promotion, Promotion, PROMOTION_PRESETS, moved)
        pool = resolve_moved("summary_pool", summary_pool, SummaryPool, POOL_PRESETS, moved)
        check_at_least("k", k)
        self.promotion: Promotion = promo
        """The promotion options in force (preset resolved)."""
        self.pool_options: SummaryPool = pool
        """The summary-pool options in force (preset resolved)."""
        self.decide_per: DecidePer = promo.decide_per
        self.index = ToolIndex(build_ranker(ranker, cache))
        """The tool registry and its fitted ranker."""
        self.k = k
        threshold = promo.threshold
        if threshold is None:
            threshold = getattr(self.index.ranker, "default_threshold", 0.0)
        self.threshold = float(threshold)
        self.pinned = frozenset(pinned) | {LOAD_CONTEXT}
        self.preconditions = validate(preconditions or {})
        self.intent_turns = promo.intent_turns
        self.sticky_turns = promo.sticky_turns
        self.detect_names = promo.detect_names
        self.summary_pool: PoolMode = pool.mode
        self.pool_budget_tokens = pool.budget
        self.emit_events = emit_events
        self._name = name
        self._pools: dict[tuple[str, ...], tuple[str, int]] = {}
        self._matchers: dict[tuple[str, ...], NameMatcher] = {}
        self._facts = FactsMemo()
        self._counter = get_counter()
        self._eager = list(tools) if tools is not None else []
        self.disclosure = DisclosureSetting(
            pool.disclosure,
            type(self).__name__,
            deferred=len({tool_name(t) for t in self._eager if not is_pinned(t)} - self.pinned),
        )
        """The `disclosure=` option (`summary_pool=SummaryPool(disclosure=...)`), resolved per
        chat model at its first call."""
        self.search_tool = make_search_tool()
        """The client-side search tool sent in the native modes that disclose in the history;
        this middleware answers its calls (`search`)."""
        self._tools: dict[str, Any] = {}
        self._tools_from: ToolFacts | None = None
        """The facts whose tool objects `_tools` last took in (the same list adds nothing)."""
        self._eager_writes = frozenset(tool_name(t) for t in self._eager if not may_open(t, "code"))
        """Tools given at construction that write (the catalog pool leaves them out unless
        this call's candidates hold them)."""

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    @property
    def ranker_name(self) -> str:
        """Name of the ranker in use (e.g. to report a BM25 fallback)."""
        return self.index.ranker.name

    def warm_up(self, tools: Sequence[BaseTool] | None = None) -> None:
        """Index tools now (embedding new ones) instead of on the first model call."""
        self.index.update(list(tools) if tools is not None else self._eager)

    # -- the decision ------------------------------------------------------------------------

    def _precondition(self, name: str, tool: Any) -> Precondition | None:
        if name in self.preconditions:
            return self.preconditions[name]
        meta = getattr(tool, "metadata", None) or {}
        found = meta.get("preconditions") if isinstance(meta, Mapping) else None
        return found if callable(found) or isinstance(found, Mapping) else None

    def decide(
        self,
        state: Mapping[str, Any],
        tools: Sequence[BaseTool | dict[str, Any]],
        *,
        opened: Collection[str] = (),
    ) -> Decision:
        """The gate's decision for `state` over candidate `tools` (no model call made);
        `opened`: tools that write which the model or the application already opened (a scope
        it loaded): they rank like tools that read."""
        facts = self._facts.facts(tools, objects_only=True)
        if self._eager:
            self.index.update(self._eager)
        self.index.update(facts.objects, signature=facts.ids)
        if facts is not self._tools_from:  # a Python step per tool only for a new list
            if len(self._tools) > 4 * len(facts.objects) + 1024:
                self._tools.clear()
            self._tools.update((t.name, t) for t in facts.objects)
            self._tools_from = facts
        return self._decide(state, facts.names, facts, opened=opened)

    def decide_names(
        self,
        state: Mapping[str, Any],
        names: Sequence[str],
        tools: Sequence[Any] | None = None,
        asked: Sequence[str] = (),
        opened: Collection[str] = (),
    ) -> Decision:
        """The decision over already indexed tools named `names` (benchmarks and audits index a
        catalog once with `index.fit_catalog` and call this per query). The blast-radius rule
        reads the tool objects: pass `tools` for it (`decide` does); over names alone, the
        decision measures the ranking only. `asked`: tools the model asked for besides the
        ones refused this turn (promoted as requested); `opened`: writes already opened by the
        model or the application (they rank like reads)."""
        facts = self._facts.facts(tools, objects_only=False) if tools else None
        return self._decide(state, names, facts, asked=asked, opened=opened)

    def _decide(
        self,
        state: Mapping[str, Any],
        names: Sequence[str],
        facts: ToolFacts | None,
        *,
        asked: Sequence[str] = (),
        opened: Collection[str] = (),
    ) -> Decision:
        """The decision over `names`, with what the tool objects say (`facts`) when known."""
        messages = list(state.get("messages", []))
        intent = intent_text(messages, self.intent_turns)
        present = facts.present if facts is not None and names is facts.names else set(names)
        checks = {n: check for n, check in self.preconditions.items() if n in present}
        for name, own in facts.metadata_checks if facts is not None else ():
            found = self.preconditions.get(name, own)
            if found is not None:
                checks.setdefault(name, found)
        writes: frozenset[str] = frozenset()
        if facts is not None:
            writes = facts.writes if present is facts.present else facts.writes & present
        inputs = GateInputs(
            intent=intent,
            candidates=names,
            pinned=self.pinned | frozenset(facts.marked if facts is not None else ()),
            named=self._matcher(names)(intent) if self.detect_names else (),
            requested=[*requested_tools(messages), *asked],
            sticky=used_tools(messages, self.sticky_turns),
            preconditions=checks,
            state=state,
            writes=writes - frozenset(opened),
        )
        return decide(inputs, self.index.scores, k=self.k, threshold=self.threshold)

    def _matcher(self, names: Sequence[str]) -> NameMatcher:
        key = tuple(names)
        matcher = self._matchers.get(key)
        if matcher is None:
            if len(self._matchers) > 64:
                self._matchers.clear()
            matcher = self._matchers[key] = NameMatcher(key)
        return matcher

    def pool(
        self, candidates: Sequence[str], pinned: Iterable[str] = (), withheld: Iterable[str] = ()
    ) -> tuple[str, int]:
        """The summary pool text for this call and its size in tokens ('' when off).

        Pinned tools (`pinned=` here and of the gate) are left out (they always come with their
        schema), and so is a scope pool whose tools all fit within k (all are always sent)
        unless some are `withheld` (writes nobody asked for: the pool is how the model asks).
        """
        if self.summary_pool == "off":
            return "", 0
        source = self._catalog(candidates) if self.summary_pool == "catalog" else candidates
        skip = self.pinned | frozenset(pinned)
        names = tuple(n for n in source if n not in skip)
        asked = set(withheld) & set(names)
        if self.summary_pool != "catalog" and len(names) <= self.k and not asked:
            return "", 0
        cached = self._pools.get(names)
        if cached is None:
            lines = []
            for n in names:
                spec = self.index.spec(n)
                lines.append((spec.name, summarize(spec.description)) if spec else (n, ""))
            text = pool_text(lines)
            cached = (text, self._counter.count(text))
            if len(self._pools) > 256:
                self._pools.clear()
            self._pools[names] = cached
        text, tokens = cached
        if self.summary_pool == "auto" and tokens > self.pool_budget_tokens:
            return "", 0
        return text, tokens

    def _catalog(self, candidates: Sequence[str]) -> list[str]:
        """Every tool the gate knows, less the writes outside this call's `candidates`: a tool
        that writes in a scope nobody opened is not named by the gate (`core.blast_radius`);
        the candidates are what the application or the model put in view."""
        present = set(candidates)
        return [
            n
            for n in self.index.names
            if n in present
            or (n not in self._eager_writes and may_open(self._tools.get(n, {}), "code"))
        ]

    def held_tools(
        self, state: Mapping[str, Any], decision: Decision, candidates: Sequence[str]
    ) -> list[str]:
        """The tools this call shows: the decision, or with `decide_per="turn"` the tools
        decided at this turn's first call plus the ones refused since (promoted now). A new
        candidate set (a scope switch inside the turn) gets a new decision."""
        held = state.get("gate_turn") if self.decide_per == "turn" else None
        messages = list(state.get("messages", []))
        if (
            not isinstance(held, Mapping)
            or held.get("turn") != turn_key(messages)
            or held.get("candidates") != _fingerprint(candidates)
        ):
            return list(decision.shown)
        kept = list(held.get("shown") or [])
        fresh = set(decision.shown)
        return kept + [n for n in requested_tools(messages) if n in fresh and n not in kept]

    def prepare_request(
        self, request: ModelRequest[ContextT]
    ) -> tuple[ModelRequest[ContextT], Decision]:
        """Narrow `request` to the promoted tools and append the summary pool to the prompt."""
        narrowed, decision, _ = self._prepare(request)
        return narrowed, decision

    def disclosure_for(self, request: ModelRequest[ContextT]) -> Disclosure:
        """The disclosure mode for this call's chat model.

        Raises:
            ValueError: the chat model cannot carry the `disclosure=` mode.
        """
        return self.disclosure.for_model(request.model)

    def _prepare(
        self, request: ModelRequest[ContextT]
    ) -> tuple[ModelRequest[ContextT], Decision, list[str]]:
        """`prepare_request`, plus the names this call shows (for the state update)."""
        narrowed, decision, held, _, _ = self._prepare_all(request)
        return narrowed, decision, held

    def _prepare_all(
        self, request: ModelRequest[ContextT]
    ) -> tuple[ModelRequest[ContextT], Decision, list[str], list[BaseMessage], list[str] | None]:
        """`_prepare` in the mode in force, plus the disclosure pair for the tail and (in a
        mode with the search tool) the names the search may load."""
        disclosure = self.disclosure_for(request)
        if disclosure.native:
            return self._prepare_native(request, disclosure)
        narrowed, decision, held = self._prepare_rewrite(request)
        return narrowed, decision, held, [], None

    def _prepare_rewrite(
        self, request: ModelRequest[ContextT]
    ) -> tuple[ModelRequest[ContextT], Decision, list[str]]:
        """The rewrite mode: the tools array narrowed to the decision, the pool in the prompt."""
        decision = self.decide(request.state, request.tools)
        facts = self._facts.facts(request.tools, objects_only=True)
        candidates, marked = facts.names, facts.marked
        held = self.held_tools(request.state, decision, candidates)
        shown = set(held)
        rows = sorted([*facts.dict_rows, *(r for n in shown for r in facts.rows.get(n, ()))])
        tools = [request.tools[r] for r in rows]
        text, tokens = self.pool(
            candidates, marked, [n for n in decision.withheld_writes if n not in shown]
        )
        overrides: dict[str, Any] = {"tools": tools}
        choice = visible_tool_choice(request.tool_choice, tools)
        if choice != request.tool_choice:
            overrides["tool_choice"] = choice  # a provider rejects a choice it was not sent
        if text:
            base = request.system_message.text if request.system_message is not None else ""
            overrides["system_message"] = SystemMessage("\n\n".join(p for p in (base, text) if p))
        self._emit(request, decision, [n for n in candidates if n in shown], candidates, tokens)
        return request.override(**overrides), decision, held

    def _emit(
        self,
        request: ModelRequest[ContextT],
        decision: Decision,
        shown: list[str],
        candidates: Sequence[str],
        tokens: int,
        mode: str = "rewrite",
    ) -> None:
        """Write the `gate` stream event of this call."""
        if not self.emit_events or request.runtime is None:
            return
        writer = getattr(request.runtime, "stream_writer", None)
        if writer is not None:
            writer(
                {
                    "type": "gate",
                    "intent": decision.intent,
                    "shown": shown,
                    "candidates": len(candidates),
                    "pool_tokens": tokens,
                    "ranker": self.ranker_name,
                    "trace": decision.as_trace(max_rank=TRACE_DEPTH * max(self.k, 1)),
                    "disclosure": mode,
                }
            )

    def _prepare_native(
        self, request: ModelRequest[ContextT], disclosure: Disclosure
    ) -> tuple[ModelRequest[ContextT], Decision, list[str], list[BaseMessage], list[str] | None]:
        """A native `disclosure=` mode: the decision over this call's candidates (a scoping
        middleware before this one names them in `VISIBLE_KEY`), plus what the model loaded
        this turn; every tool sent in the mode's stable shape (the search tool added where the
        mode discloses in the history), the system prompt unchanged (no pool), and what the
        history has not disclosed yet disclosed by a search pair at the tail."""
        state = request.state if isinstance(request.state, Mapping) else {}
        view = state.get(VISIBLE_KEY)
        upstream = _upstream(view)
        named = disclosure.tool_objects(request.tools)
        pool = [t for t in named if upstream is None or t.name in upstream[0]]
        asked = turn_disclosed(disclosure, request.messages)
        candidates = [t.name for t in pool]
        # what a scoping middleware before this one shows was opened within the blast-radius rule
        decision = self.decide(state, pool, opened=upstream[0] if upstream is not None else ())
        held = self.held_tools(state, decision, candidates)
        held += [n for n in candidates if n in asked and n not in held and self._runs(n, state)]
        loaded = set(self.pinned) | {t.name for t in named if is_pinned(t)}
        loaded |= upstream[1] if upstream is not None else set()
        messages = request.messages
        if disclosure.in_history and messages and not is_user_turn(messages[-1]):
            # inside a turn only what the model asked for is disclosed anew (a refused call);
            # what ranking alone brings up waits for the next turn, or the model's search
            requested = set(requested_tools(messages))
            seen = disclosure.disclosed(messages) or frozenset()
            held = [n for n in held if n in loaded or n in seen or n in requested]
        tools: list[BaseTool | dict[str, Any]] = list(request.tools)
        if disclosure.in_history:
            loaded.add(SEARCH_TOOL)
            if SEARCH_TOOL not in {t.name for t in named}:
                tools.append(self.search_tool)
        shaped = disclosure.shape(
            tools, visible=held, loaded=loaded, tool_choice=request.tool_choice
        )
        new = missing(disclosure, request.messages, held, loaded)
        pair = disclosure.announce(
            new,
            tool=SEARCH_TOOL,
            args={"query": decision.intent},
            text=search_payload(decision.intent, new, []),
            call_id=pair_id(request.messages, SEARCH_TOOL + ":" + ",".join(new)),
        )
        shown = [n for n in candidates if n in set(held)]
        self._emit(request, decision, shown, candidates, 0, disclosure.mode)
        overrides: dict[str, Any] = {"tools": shaped.tools, "tool_choice": shaped.tool_choice}
        if pair:
            overrides["messages"] = [*request.messages, *pair]
        searchable = candidates if disclosure.in_history else None
        return request.override(**overrides), decision, held, pair, searchable

    def _runs(self, name: str, state: Mapping[str, Any]) -> bool:
        """Whether `name`'s precondition (if any) holds in `state`."""
        return unmet(self._precondition(name, self._tools.get(name)), state) is None

    def _command(
        self,
        request: ModelRequest[Any],
        decision: Decision,
        shown: list[str],
        searchable: list[str] | None = None,
    ) -> Command[Any]:
        trace = decision.as_trace(max_rank=TRACE_DEPTH * max(self.k, 1))
        if searchable is not None:  # what the search tool may load (the call's candidates)
            trace = {**trace, SEARCHABLE: searchable}
        update: dict[str, Any] = {"gate_exposed": shown, "gate_trace": trace}
        if self.decide_per == "turn":
            messages: list[Any] = list(request.state.get("messages", []))
            update["gate_turn"] = {
                "turn": turn_key(messages),
                "candidates": _fingerprint(decision.candidate_names),
                "shown": shown,
            }
        return Command(update=update)

    def review_tool_call(self, request: ToolCallRequest) -> ToolMessage | None:
        """A refusal when the call's tool was not sent or its precondition fails, else None."""
        call = request.tool_call
        name = call["name"]
        state = request.state if isinstance(request.state, Mapping) else {}
        exposed = list(state.get("gate_exposed") or [])
        problem = unmet(self._precondition(name, request.tool), state)
        if problem is not None:
            payload = precondition_payload(name, problem, exposed)
        elif name in exposed:
            return None
        elif request.tool is None:
            payload = unknown_tool_payload(name, exposed)
        else:
            payload = not_available_payload(name, summarize(request.tool.description), exposed)
        return refusal_message(call, payload)

    # -- LangChain hooks ---------------------------------------------------------------------

    @override
    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.ModelHandler[ContextT, ResponseT]
    ) -> ExtendedModelResponse[ResponseT]:
        """Call the model with the promoted tools; record what was exposed."""
        narrowed, decision, shown, pair, searchable = self._prepare_all(request)
        mode = self.disclosure_for(request)
        reply = read_reply(mode, handler(on_wire(mode, narrowed)))
        response = repair_response(reply, thread_call_ids(request.messages))
        return ExtendedModelResponse(
            model_response=with_pair(response, pair),
            command=self._command(request, decision, shown, searchable),
        )

    @override
    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.AsyncModelHandler[ContextT, ResponseT]
    ) -> ExtendedModelResponse[ResponseT]:
        """Async form; the ranking runs in a worker thread so the event loop stays free."""
        prepared = await asyncio.to_thread(self._prepare_all, request)
        narrowed, decision, shown, pair, searchable = prepared
        mode = self.disclosure_for(request)
        reply = read_reply(mode, await handler(on_wire(mode, narrowed)))
        response = repair_response(reply, thread_call_ids(request.messages))
        return ExtendedModelResponse(
            model_response=with_pair(response, pair),
            command=self._command(request, decision, shown, searchable),
        )

    @override
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.ToolHandler
    ) -> hooks.ToolResult:
        """Answer a search call here; review and run any other call."""
        found = self.search(request)
        return found if found is not None else super().wrap_tool_call(request, handler)

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.AsyncToolHandler
    ) -> hooks.ToolResult:
        """Async form of `wrap_tool_call` (the search ranks in a worker thread)."""
        if request.tool_call["name"] == SEARCH_TOOL:
            found = await asyncio.to_thread(self.search, request)
            if found is not None:
                return found
        return await super().awrap_tool_call(request, handler)

    def search(self, request: ToolCallRequest) -> ToolMessage | None:
        """The result of a call to the search tool, in a mode that sends it: the best matches
        among this turn's candidates for the query (tools named exactly first), preconditions
        applied, disclosed in the mode's form. Tools that write are loaded only when the query
        names them exactly; others are listed. Tools the history already disclosed are not
        referenced again. None for any other call."""
        call = request.tool_call
        disclosure = self.disclosure.last
        if call["name"] != SEARCH_TOOL or disclosure is None or not disclosure.in_history:
            return None
        state = request.state if isinstance(request.state, Mapping) else {}
        args = call.get("args")
        query = str(args.get("query") or "") if isinstance(args, Mapping) else ""
        trace = state.get("gate_trace")
        names = list((trace or {}).get(SEARCHABLE) or self.index.names)
        names = [n for n in names if n not in self.pinned and self._runs(n, state)]
        found, held_back = search_tools(
            self.index,
            query,
            names,
            k=max(self.k, 1),
            threshold=self.threshold,
            writes=frozenset(n for n in names if not may_open(self._tool(n), "code")),
        )
        # a definition already expanded stays in the conversation: referencing it again would
        # bill it again on every later call
        seen = disclosure.disclosed(state.get("messages", [])) or frozenset()
        found = [n for n in found if n not in seen]
        content = disclosure.content(found, search_payload(query, found, held_back))
        return ToolMessage(content, tool_call_id=call["id"], name=SEARCH_TOOL)

    def _tool(self, name: str) -> Any:
        """The tool object (or its indexed spec) of `name`, for the blast-radius rule."""
        return self._tools.get(name) or self.index.spec(name) or {}


def explain(trace: Mapping[str, Any] | None, name: str) -> str:
    """Why `name` was shown or hidden, from a stored `gate_trace` (or a `gate` event's trace)."""
    if not trace:
        return "no gate trace: the gate has not run in this thread yet"
    for verdict in trace.get("verdicts", []):
        if verdict["name"] == name:
            score = verdict.get("score")
            parts = [
                f"{name!r} was {'shown' if verdict['shown'] else 'hidden'}: {verdict['reason']}"
            ]
            if verdict.get("rank") is not None:
                parts.append(f"rank {verdict['rank']}")
            if score is not None:
                limits = f"threshold {trace.get('threshold', 0):g}, k={trace.get('k')}"
                parts.append(f"score {score:.3f} ({limits})")
            if verdict.get("detail"):
                parts.append(verdict["detail"])
            return "; ".join(parts) + "."
    depth = TRACE_DEPTH * max(int(trace.get("k") or 0), 1)
    return (
        f"{name!r} is not in the stored trace: it was hidden below rank {depth}, or it was not a "
        "candidate of the last call (not registered or out of scope)"
    )
