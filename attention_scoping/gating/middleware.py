"""Tool Attention middleware: per model call, full schemas only for the tools the intent needs."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.adapters import hooks
from attention_scoping.adapters.tools import is_pinned, tool_name, visible_tool_choice
from attention_scoping.common.messages import intent_text, is_user_turn
from attention_scoping.common.tokens import get_counter
from attention_scoping.common.tool import summarize
from attention_scoping.disclosure.base import (
    SEARCH_TOOL,
    VISIBLE_KEY,
    Disclosure,
    DisclosureSetting,
    mode_class,
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
from attention_scoping.errors import ErrorCode, Payload, refusal, render_payload
from attention_scoping.gate import (
    INVALID_ARGUMENTS_KEY,
    Record,
    clipped,
    record_of,
    repaired,
    stamp,
    thread_call_ids,
)
from attention_scoping.gating.disclosure import (
    PoolMode,
    not_available_payload,
    not_read_payload,
    pool_text,
    precondition_payload,
    unknown_tool_payload,
)
from attention_scoping.gating.errors import GateConfigError, check_count
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
from attention_scoping.load_context import OPENED_KEY
from attention_scoping.messages import reply_with_call
from attention_scoping.risk import declared_read
from attention_scoping.scopes import LOAD_CONTEXT, STATE_KEY

if TYPE_CHECKING:
    from attention_scoping.gating.cache import VectorCache

logger = logging.getLogger(__name__)

SEARCHABLE = "searchable"
"""Key of a reply's record holding, in a native mode with the search tool, what it may load
(declared reads among the call's candidates whose preconditions held)."""

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


def _resolve(option: str, value: object, kind: type, presets: Mapping[str, Any]) -> Any:
    """An option group given as its object or a preset name."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and value in presets:
        return presets[value]
    valid = ", ".join(repr(p) for p in presets)
    msg = f"{option} must be a {kind.__name__} or one of {valid}, not {value!r}"
    raise GateConfigError(msg)


def _names(option: str, value: object) -> frozenset[str]:
    """A collection of tool names, refused when it is a string or holds a non-string."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        msg = f"{option} must be a collection of tool names, not {value!r}"
        raise GateConfigError(msg)
    items = list(value)
    bad = next((v for v in items if not isinstance(v, str)), None)
    if bad is not None:
        msg = f"{option} must hold tool names (strings), not {bad!r}"
        raise GateConfigError(msg)
    return frozenset(items)


def _invalid_arguments(call: Mapping[str, Any]) -> Payload | None:
    """The refusal of a call whose arguments the core's repair marked invalid, else None."""
    args = call.get("args")
    if not isinstance(args, Mapping) or INVALID_ARGUMENTS_KEY not in args:
        return None
    name = str(call.get("name") or "the tool")
    return refusal(
        ErrorCode.INVALID_ARGUMENTS,
        f"{name} was not run: its arguments are not a valid JSON object.",
        tool=name,
        next_step=f"Call {name} again with arguments written as one JSON object.",
    )


def opened_by_choice(state: Mapping[str, Any]) -> bool:
    """Whether a scoping middleware outside this gate has the active scope open by the model's
    own `load_context` or by the application: then every tool it lets through was put in view
    by that choice, and the gate ranks them all; otherwise (no scoping, or a scope code
    opened) only declared reads are candidates for promotion."""
    opened = state.get(OPENED_KEY)
    return (
        isinstance(opened, Mapping)
        and opened.get("by") in ("model", "application")
        and opened.get("scope") is not None
        and opened.get("scope") == state.get(STATE_KEY)
    )


class ToolAttentionMiddleware(AgentMiddleware[GateState[ResponseT], ContextT, ResponseT]):
    """Rank tools by the user's intent and send full schemas only for the top ones.

    Per model call: candidates are the tools in the request (after scoping, if the scoping
    middleware is listed before this one). Tools whose preconditions fail are hidden; pinned
    tools (`load_context` at least) are always kept; declared reads the user names, the model
    was refused this turn, or the model used in the current task are promoted; the remaining
    declared reads are ranked by similarity of their text to the user's latest message, and the
    top `k` above `threshold` are sent. Defaults: `k=5`, the MiniLM + BM25 hybrid ranker
    (threshold 0.5; BM25 alone with a warning without the `gate` extra), decisions per call,
    the `auto` summary pool (within 2,500 tokens), `rewrite` disclosure unless the chat model
    asks for its native one (`SummaryPool(disclosure=...)`).

    Fail closed (`attention_scoping.risk`): the gate is code deciding for the model, so it shows
    a tool that is not a declared read (a declared write, or a tool nobody classified) only when
    the application pins it: `pinned=[...]`, or `metadata={"pinned": True}` on the tool, or when
    an outer scoping middleware has the active scope open by the model's own `load_context` or
    by the application (`opened_by_choice`): its tools were put in view by that choice, and the
    gate only narrows them. Otherwise ranking, a name in the user's message, every candidate
    fitting within `k`, a refused call retried, stickiness, the summary pool, the `catalog` pool
    and the search tool of the native modes all take declared reads only, so an unmarked
    `refund` is never put in view, named or promised by the gate on its own. Declare reads with
    `metadata={"risk": "read"}`, MCP `readOnlyHint: true`, or `reads=` here (say
    `reads=scoping.catalog.declared_reads` for the
    reads your `Scope(..., reads=[...])` declare).

    What a call may run is what its reply was shown: each reply `AIMessage` is stamped with the
    tools sent for it (`attention_scoping.gate.stamp`, keyed by this middleware's `name`), and
    the tool hook decides from that record alone (`record_of`). No record: refused as
    `not_shown`, never run. Nothing per request lives on the instance, so one instance serves
    many threads and chat models at once.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.gating.middleware import ToolAttentionMiddleware

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
        reads: Iterable[str] = (),
        preconditions: Mapping[str, Precondition] | None = None,
        tools: Iterable[BaseTool] | None = None,
        cache: VectorCache | None = None,
        emit_events: bool = True,
        name: str | None = None,
    ) -> None:
        """Configure the gate.

        Args:
            ranker: `"default"` (MiniLM + BM25 hybrid; BM25 alone with a warning when the `gate`
                extra is missing), `"hybrid"`, `"dense"`, `"bm25"`, an `Encoder`, a LangChain
                `Embeddings`, or any `Ranker`.
            k: Similarity-ranked tools per call, an integer >= 1 (named and requested tools take
                slots first).
            promotion: What else is promoted and how often the gate decides: a
                `Promotion(threshold=, intent_turns=, sticky_turns=, detect_names=,
                decide_per=)` or a preset, `"per_call"` (default) or `"per_turn"` (decide once
                per user turn, so a provider's prompt cache keeps the turn's prefix).
            summary_pool: One-line summaries of the declared reads held back: a
                `SummaryPool(mode, budget_tokens=, disclosure=)` or a mode, `"auto"` (this
                call's candidates, if within the budget; default), `"scope"`, `"catalog"` or
                `"off"`.
            pinned: Tools always sent, besides `load_context` and tools whose metadata says
                `pinned=True`; the only way a tool that is not a declared read is shown.
            reads: Tool names declared reads besides their own metadata.
            preconditions: `{tool: callable(state) -> bool | {"state_key": value}}`; a tool's
                `metadata["preconditions"]` works too.
            tools: Tools to index up front (also the `catalog` pool before they are seen).
            cache: Where tool vectors are cached (default `~/.cache/attention-scoping`).
            emit_events: Write a `{"type": "gate", ...}` custom stream event per model call.
            name: Middleware name (and the key of its records), to use two gates in one agent.

        Raises:
            GateConfigError: (a `ValueError`) `k` below 1 or not an integer, a threshold that is
                not a finite number, an unknown preset, ranker or disclosure, a bad
                precondition, or options that contradict each other.
        """
        super().__init__()
        check_count("k", k, 1)
        promo = _resolve("promotion", promotion, Promotion, PROMOTION_PRESETS)
        pool = _resolve("summary_pool", summary_pool, SummaryPool, POOL_PRESETS)
        if not isinstance(emit_events, bool):
            msg = f"emit_events must be True or False, not {emit_events!r}"
            raise GateConfigError(msg)
        if name is not None and (not isinstance(name, str) or not name):
            msg = f"name must be a non-empty string or None, not {name!r}"
            raise GateConfigError(msg)
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
        self.pinned = _names("pinned", pinned) | {LOAD_CONTEXT}
        self.reads = _names("reads", reads)
        """Tool names declared reads by the application (besides their metadata)."""
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
        try:
            self.disclosure = DisclosureSetting(
                pool.disclosure,
                type(self).__name__,
                deferred=len({tool_name(t) for t in self._eager if not is_pinned(t)} - self.pinned),
            )
            """The `disclosure=` option (`summary_pool=SummaryPool(disclosure=...)`), resolved
            per chat model at its first call."""
        except ValueError as exc:
            raise GateConfigError(str(exc)) from exc
        self.search_tool = make_search_tool()
        """The client-side search tool sent in the native modes that disclose in the history;
        this middleware answers its calls (`search`)."""
        self._eager_reads = tuple(
            tool_name(t) for t in self._eager if self._is_read(t, tool_name(t))
        )
        """Declared reads given at construction (the `catalog` pool names only them beyond
        this call's candidates)."""

    def _is_read(self, tool: object, name: str) -> bool:
        """Whether `tool` is a declared read (its metadata, or `reads=`)."""
        return declared_read(tool, name, self.reads)

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
    ) -> Decision:
        """The gate's decision for `state` over candidate `tools` (no model call made)."""
        facts = self._facts.facts(tools, objects_only=True)
        if self._eager:
            self.index.update(self._eager)
        self.index.update(facts.objects, signature=facts.ids)
        return self._decide(state, facts.names, facts)

    def decide_names(
        self,
        state: Mapping[str, Any],
        names: Sequence[str],
        tools: Sequence[Any] | None = None,
        asked: Sequence[str] = (),
    ) -> Decision:
        """The decision over already indexed tools named `names` (benchmarks and audits index a
        catalog once with `index.fit_catalog` and call this per query). The fail-closed rule
        reads the tool objects: pass `tools` for it (`decide` does); over names alone, the
        decision measures the ranking only. `asked`: tools the model asked for besides the
        ones refused this turn (promoted as requested)."""
        facts = self._facts.facts(tools, objects_only=False) if tools else None
        return self._decide(state, names, facts, asked=asked)

    def _decide(
        self,
        state: Mapping[str, Any],
        names: Sequence[str],
        facts: ToolFacts | None,
        *,
        asked: Sequence[str] = (),
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
        if facts is not None and not opened_by_choice(state):
            writes = facts.writes if present is facts.present else facts.writes & present
            writes -= self.reads
        inputs = GateInputs(
            intent=intent,
            candidates=names,
            pinned=self.pinned | frozenset(facts.marked if facts is not None else ()),
            named=self._matcher(names)(intent) if self.detect_names else (),
            requested=[*requested_tools(messages), *asked],
            sticky=used_tools(messages, self.sticky_turns),
            preconditions=checks,
            state=state,
            writes=writes,
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
        self,
        candidates: Sequence[str],
        pinned: Iterable[str] = (),
        *,
        not_reads: Iterable[str],
    ) -> tuple[str, int]:
        """The summary pool text for this call and its size in tokens ('' when off).

        Only declared reads are listed: `not_reads` (this call's candidates that are not) are
        left out, so the gate never names a tool it would not show. Pinned tools are left out
        too (they always come with their schema), and so is a scope pool whose tools all fit
        within k (all are sent).
        """
        if self.summary_pool == "off":
            return "", 0
        source = self._catalog(candidates) if self.summary_pool == "catalog" else candidates
        skip = self.pinned | frozenset(pinned) | frozenset(not_reads)
        names = tuple(n for n in source if n not in skip)
        if self.summary_pool != "catalog" and len(names) <= self.k:
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
        """The `catalog` pool: this call's candidates, then the declared reads given at
        construction (`tools=`) that are not among them (a tool seen only in another request is
        not named: whether it reads is known from its object alone)."""
        present = set(candidates)
        return [*candidates, *(n for n in self._eager_reads if n not in present)]

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
        text, tokens = self.pool(candidates, marked, not_reads=facts.writes - self.reads)
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
        objects = {t.name: t for t in pool}
        decision = self.decide(state, pool)
        held = self.held_tools(state, decision, candidates)
        pinned = self.pinned | {n for n, t in objects.items() if is_pinned(t)}
        held += [
            n
            for n in candidates
            if n in asked
            and n not in held
            and (n in pinned or self._is_read(objects[n], n))
            and self._runs(n, objects[n], state)
        ]
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
            text=search_payload(decision.intent, new),
            call_id=pair_id(request.messages, SEARCH_TOOL + ":" + ",".join(new)),
        )
        shown = [n for n in candidates if n in set(held)]
        self._emit(request, decision, shown, candidates, 0, disclosure.mode)
        overrides: dict[str, Any] = {"tools": shaped.tools, "tool_choice": shaped.tool_choice}
        if pair:
            overrides["messages"] = [*request.messages, *pair]
        searchable = None
        if disclosure.in_history:  # what the search tool may load: declared reads that run now
            searchable = [
                n
                for n in candidates
                if n not in pinned
                and self._is_read(objects[n], n)
                and self._runs(n, objects[n], state)
            ]
        return request.override(**overrides), decision, held, pair, searchable

    def _runs(self, name: str, tool: Any, state: Mapping[str, Any]) -> bool:
        """Whether `name`'s precondition (if any) holds in `state`."""
        return unmet(self._precondition(name, tool), state) is None

    def _update(
        self, request: ModelRequest[Any], decision: Decision, shown: list[str]
    ) -> Command[Any]:
        """The state update of a call: what it showed and why (for observers; the tool hook
        reads the reply's record, never these keys)."""
        trace = decision.as_trace(max_rank=TRACE_DEPTH * max(self.k, 1))
        update: dict[str, Any] = {"gate_exposed": shown, "gate_trace": trace}
        if self.decide_per == "turn":
            messages: list[Any] = list(request.state.get("messages", []))
            update["gate_turn"] = {
                "turn": turn_key(messages),
                "candidates": _fingerprint(decision.candidate_names),
                "shown": shown,
            }
        return Command(update=update)

    def _stamped(
        self,
        request: ModelRequest[Any],
        response: Any,
        shown: list[str],
        mode: str,
        searchable: list[str] | None,
    ) -> ModelResponse[Any]:
        """The model's reply, repaired (unique call ids, invalid arguments marked) and stamped
        with what it could call: the tools sent (and the search tool, with what it may load,
        in a mode that sends it)."""
        inner = response.model_response if isinstance(response, ExtendedModelResponse) else response
        if isinstance(inner, AIMessage):
            inner = ModelResponse(result=[inner])
        tools = sorted({*shown, *((SEARCH_TOOL,) if searchable is not None else ())})
        record: Record = {"tools": tools, "scope": None, "opened_by": "code", "disclosure": mode}
        extra = {} if searchable is None else {SEARCHABLE: list(searchable)}
        taken = thread_call_ids(request.messages)
        result = [
            stamp(repaired(m, taken), self.name, {**record, **extra})  # type: ignore[typeddict-item]
            if isinstance(m, AIMessage)
            else m
            for m in inner.result
        ]
        return ModelResponse(result=result, structured_response=inner.structured_response)

    def _finish(
        self, request: ModelRequest[Any], response: Any, prepared: tuple[Any, ...], mode: Disclosure
    ) -> ExtendedModelResponse[Any]:
        _, decision, shown, pair, searchable = prepared
        command = response.command if isinstance(response, ExtendedModelResponse) else None
        reply = self._stamped(request, read_reply(mode, response), shown, mode.mode, searchable)
        update = self._update(request, decision, shown)
        if command is not None and isinstance(command.update, dict):
            update = Command(update={**update.update, **command.update})  # type: ignore[dict-item]
        return ExtendedModelResponse(model_response=with_pair(reply, pair), command=update)

    def review_tool_call(self, request: ToolCallRequest) -> ToolMessage | None:
        """A refusal unless the record of the reply that made the call names the tool and its
        precondition holds, else None. No record: `not_shown`."""
        call = request.tool_call
        name = str(call.get("name") or "")
        state = request.state if isinstance(request.state, Mapping) else {}
        messages = list(state.get("messages") or [])
        reply = reply_with_call(messages, call.get("id"))
        record = record_of(reply, self.name) if reply is not None else None
        if record is None:
            payload: Payload | None = refusal(
                ErrorCode.NOT_SHOWN,
                f"{name!r} was not run: no record shows it was offered with the reply that "
                "called it.",
                tool=name,
                next_step="Call only tools you were given in this step.",
            )
        else:
            payload = _invalid_arguments(call) or self._review(name, request.tool, record, state)
        if payload is None:
            return None
        return ToolMessage(
            render_payload(payload),
            tool_call_id=str(call.get("id") or ""),
            name=name,
            status="error",
        )

    def _review(
        self, name: str, tool: Any, record: Mapping[str, Any], state: Mapping[str, Any]
    ) -> Payload | None:
        """The refusal of a call of `name` under its reply's `record`, else None."""
        exposed = [n for n in record["tools"] if n != SEARCH_TOOL]
        problem = unmet(self._precondition(name, tool), state)
        if problem is not None:
            return precondition_payload(name, problem, exposed)
        if name in record["tools"]:
            return None
        if tool is None:
            return unknown_tool_payload(name, exposed)
        if name not in self.pinned and not is_pinned(tool) and not self._is_read(tool, name):
            return not_read_payload(name, exposed)
        return not_available_payload(name, summarize(tool.description), exposed)

    # -- LangChain hooks ---------------------------------------------------------------------

    @override
    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.ModelHandler[ContextT, ResponseT]
    ) -> ExtendedModelResponse[ResponseT]:
        """Call the model with the promoted tools; stamp the reply with what it was shown."""
        prepared = self._prepare_all(request)
        mode = self.disclosure_for(request)
        response = handler(on_wire(mode, prepared[0]))
        return self._finish(request, response, prepared, mode)

    @override
    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.AsyncModelHandler[ContextT, ResponseT]
    ) -> ExtendedModelResponse[ResponseT]:
        """Async form; the ranking runs in a worker thread so the event loop stays free."""
        prepared = await asyncio.to_thread(self._prepare_all, request)
        mode = self.disclosure_for(request)
        response = await handler(on_wire(mode, prepared[0]))
        return self._finish(request, response, prepared, mode)

    @override
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.ToolHandler
    ) -> hooks.ToolResult:
        """Answer a search call here; run any other call only when its reply's record allows
        it (a result longer than the core's limit is cut, the cut marked)."""
        found = self.search(request)
        if found is not None:
            return found
        refused = self.review_tool_call(request)
        if refused is not None:
            return refused
        result = handler(request)
        return clipped(result) if isinstance(result, ToolMessage) else result

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.AsyncToolHandler
    ) -> hooks.ToolResult:
        """Async form of `wrap_tool_call` (the search ranks in a worker thread)."""
        if request.tool_call["name"] == SEARCH_TOOL:
            found = await asyncio.to_thread(self.search, request)
            if found is not None:
                return found
        refused = self.review_tool_call(request)
        if refused is not None:
            return refused
        result = await handler(request)
        return clipped(result) if isinstance(result, ToolMessage) else result

    def search(self, request: ToolCallRequest) -> ToolMessage | None:
        """The result of a call to the search tool, when the record of the reply that made it
        says the search tool was sent (a native mode that discloses in the history): the best
        matches for the query among the declared reads that reply's call could load (tools
        named exactly first), disclosed in the mode's form. Tools the history already
        disclosed are not referenced again. None for any other call."""
        call = request.tool_call
        if call["name"] != SEARCH_TOOL:
            return None
        state = request.state if isinstance(request.state, Mapping) else {}
        messages = list(state.get("messages") or [])
        reply = reply_with_call(messages, call.get("id"))
        record = record_of(reply, self.name) if reply is not None else None
        if record is None or not isinstance(record.get(SEARCHABLE), list):
            return None
        try:
            kind = mode_class(str(record.get("disclosure")))
        except (KeyError, ImportError):  # a record this gate did not write
            return None
        if not kind.in_history:
            return None
        disclosure = kind.create(None)
        args = call.get("args")
        query = str(args.get("query") or "") if isinstance(args, Mapping) else ""
        names = [n for n in record[SEARCHABLE] if self.index.spec(n) is not None]
        found = search_tools(self.index, query, names, k=max(self.k, 1), threshold=self.threshold)
        # a definition already expanded stays in the conversation: referencing it again would
        # bill it again on every later call
        seen = disclosure.disclosed(messages) or frozenset()
        found = [n for n in found if n not in seen]
        content = disclosure.content(found, search_payload(query, found))
        return ToolMessage(content, tool_call_id=call["id"], name=SEARCH_TOOL)


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
