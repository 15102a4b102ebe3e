"""The strategies of the billed-cost benchmark, each playing a session call by call.

A simulated model always knows which tool it needs (the turn's gold sequence) and behaves as a
competent agent would; what differs is what each model call carries, and so what the provider's
prefix cache can reuse:

- conversation_only: a reference floor with no tools at all.
- eager: all 120 schemas on every call (the tools array never changes).
- scoping: servers as scopes; the tools array and the system prompt's module change at each
  `load_context` (one extra call per switch).
- scoping_stable_prompt: the same, with the scope's module delivered in the `load_context`
  result instead of the system prompt (mode b): only the tools array changes.
- scoping_deferral: mode b plus every scoped tool deferred; `load_context` appends the
  scope's tool definitions to the conversation (once per scope and session).
- per_call_gate: the shipped gate deciding before every call; a refused tool is promoted on
  the next call.
- turn_gate: `ToolAttentionMiddleware(decide_per="turn")`: the gate decides once per user
  turn and keeps that set for every call of the turn (mode a); a refusal adds the tool.
- grow_only_gate: mode a plus grow-only disclosure (a tool once sent stays, appended at the
  end of the tools array) up to a token budget, then one reset (mode c).
- gateway: three fixed tools (search / schema / execute); what the model fetches stays in the
  history.
- gateway_with_pool: the gateway with the summary pool in its fixed system prompt: schema,
  then execute (no search).
- gateway_signatures: the gateway with every tool's signature line in its fixed system
  prompt: execute at once (the schema fetched only for an argument the line cannot show).
- native_tool_search: the provider's own tool search (Anthropic's tool search tool, OpenAI's
  `defer_loading`): every tool deferred, one search call per undiscovered tool, the 3 tools
  found expanded into the conversation.
- lazy_deferral: every tool deferred, nothing loaded ahead; the summary pool in the fixed
  system prompt lists every tool; the first call of a tool is answered with its definition
  (appended), and the model calls again.
- gate_deferral: every tool deferred (`defer_loading`), the gate choosing which to load: at
  the start of each user turn the tools it promotes are appended to the conversation as a
  tool result (no extra call); the system prompt (with the summary pool) and the tools array
  never change (modes a, b, d).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from attention_scoping.common.errors import render_payload
from attention_scoping.common.tool import ToolSpec
from attention_scoping_lab.cost import stable_json
from attention_scoping_lab.simulate.conversation import Conversation
from attention_scoping_lab.simulate.sessions import (
    Session,
    answer_text,
    tool_arguments,
    tool_output,
)
from attention_scoping_lab.simulate.tasks import Turn

BASE_PROMPT = (
    "You are the operations assistant of an engineering team. You work with GitHub, the "
    "team's file share, its SQL databases, Slack, the web and Jira through tools. Do what the "
    "user asks with the fewest tool calls, fill arguments from the conversation, and answer "
    "briefly with what you did and what you found. Never invent results: if a tool fails, "
    "say so and suggest the next step."
)
"""The user's own system prompt, the same for every strategy."""

MISSED = "I could not find a tool for that."

TOOL_SEARCH = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
"""The provider's tool-search tool (Anthropic's server tool; its own size is not public)."""


class SessionStrategy:
    """Base: the turn loop, running a tool, and counting needed-tool exposure."""

    name = ""
    description = ""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        """Index the catalog's specs and provider schemas."""
        self.specs = {s.name: s for s in specs}
        self.schema = {s.name: s.provider_schema() for s in specs}
        self.order = [s.name for s in specs]
        self.exposure = {"needed": 0, "at once": 0, "recovered": 0, "missed": 0}
        self.counters: dict[str, int] = {}

    def count(self, key: str, n: int = 1) -> None:
        """Add to a named counter."""
        self.counters[key] = self.counters.get(key, 0) + n

    def schemas(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """Provider schemas of `names`, in the given order."""
        return [self.schema[n] for n in names]

    def ordered(self, names: set[str] | Sequence[str]) -> list[str]:
        """`names` in catalog order (how a middleware filters the registered list)."""
        keep = set(names)
        return [n for n in self.order if n in keep]

    def run(self, conv: Conversation, tool: str, key: str, outcome: str = "at once") -> None:
        """The model calls `tool` and gets its output."""
        spec = self.specs[tool]
        call_id = conv.tool_call(tool, tool_arguments(spec, key))
        conv.tool_result(call_id, tool, tool_output(tool, spec.server or "", key))
        self.exposure[outcome] += 1

    def miss(self, conv: Conversation) -> None:
        """The model could not reach the tool it needed."""
        conv.answer(MISSED)
        self.exposure["missed"] += 1

    # -- the hooks a strategy implements ----------------------------------------------------

    def reset(self, session: Session) -> None:
        """Start a session."""

    def tools(self) -> list[dict[str, Any]]:
        """The tools array of the next call."""
        raise NotImplementedError

    def system(self) -> str | list[str]:
        """The system prompt of the next call."""
        return BASE_PROMPT

    def open_turn(self, conv: Conversation, session: Session, turn: Turn) -> None:
        """Before the first call of a turn."""

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """The calls that lead to `tool` being run (default: one call, then run)."""
        conv.send(self.tools(), self.system())
        self.run(conv, tool, key)

    def play(self, session: Session, conv: Conversation) -> None:
        """Every turn: the user's message, the calls for each needed tool, the answer."""
        self.reset(session)
        for t, turn in enumerate(session.turns):
            conv.user(turn.text)
            self.open_turn(conv, session, turn)
            for step, tool in enumerate(turn.tools):
                self.exposure["needed"] += 1
                self.use(conv, session, turn, tool, f"{session.id}:{t}:{step}")
            conv.send(self.tools(), self.system())
            conv.answer(answer_text(f"{session.id}:{t}"))


class Eager(SessionStrategy):
    """All schemas on every call."""

    name = "eager"
    description = "all 120 schemas on every call; nothing changes but the conversation"

    def tools(self) -> list[dict[str, Any]]:
        """The whole catalog."""
        return self.schemas(self.order)


class ConversationOnly(Eager):
    """Reference floor: no tools at all, only the user's prompt and the conversation."""

    name = "conversation_only"
    description = "reference: no tools, the same conversation (what any strategy pays at least)"

    def tools(self) -> list[dict[str, Any]]:
        """Nothing."""
        return []


class Scoping(SessionStrategy):
    """`AttentionScopingMiddleware` with the servers as scopes, navigated by the model: each
    switch is the model's own `load_context`, which opens the whole scope (the selector is
    off: the simulated requests name no scope a selector could match)."""

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        *,
        module_in_messages: bool = False,
        middleware_options: Mapping[str, Any] | None = None,
    ) -> None:
        """Build the middleware over the catalog's servers (`middleware_options`: more
        keyword arguments of `attention_scoping.middleware.AttentionScopingMiddleware`)."""
        from attention_scoping.adapters.tools import to_provider_schema
        from attention_scoping.middleware import AttentionScopingMiddleware
        from attention_scoping.scopes import LOAD_CONTEXT, Scope
        from attention_scoping_lab.simulate.strategies import SCOPE_DESCRIPTIONS

        super().__init__(specs)
        servers: dict[str, list[str]] = {}
        for spec in specs:
            servers.setdefault(spec.server or "other", []).append(spec.name)
        self.server_of = {s.name: s.server or "other" for s in specs}
        options: dict[str, Any] = {"selector": None, **(middleware_options or {})}
        self.mw = AttentionScopingMiddleware(
            [Scope(n, SCOPE_DESCRIPTIONS.get(n, ""), tools=t) for n, t in servers.items()],
            layout="stable" if module_in_messages else "layered",
            **options,
        )
        load_context = next(t for t in self.mw.tools if t.name == LOAD_CONTEXT)
        self.schema[LOAD_CONTEXT] = to_provider_schema(load_context)
        self.module_in_messages = module_in_messages
        self.name = "scoping_stable_prompt" if module_in_messages else "scoping"
        self.description = (
            "scoping; the scope's module in the load_context result (the system prompt never "
            "changes), the tools array changes per switch"
            if module_in_messages
            else "servers as scopes (AttentionScopingMiddleware as shipped); tools and module "
            "change per switch"
        )
        self.active: str | None = None

    def reset(self, session: Session) -> None:
        """No scope at the start."""
        self.active = None

    def tools(self) -> list[dict[str, Any]]:
        """load_context plus the active scope's tools (opened whole by the model), as the
        middleware filters a request's tools: in registration order, load_context first."""
        visible = set(self.mw.catalog.visible(self.active))
        return self.schemas([n for n in ["load_context", *self.order] if n in visible])

    def system(self) -> str:
        """The system prompt the middleware sends (the module swapped in, or fixed: mode b)."""
        return self.mw.prompt(self.active, BASE_PROMPT)

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Switch scope first when the tool lives elsewhere."""
        from attention_scoping.load_context import loaded_payload

        server = self.server_of[tool]
        if server != self.active:
            conv.send(self.tools(), self.system())
            call_id = conv.tool_call("load_context", {"name": server})
            payload = loaded_payload(
                self.mw.catalog,
                server,
                self.active,
                module=self.module_in_messages,
                reopened=False,
            )
            conv.tool_result(call_id, "load_context", render_payload(payload))
            self.active = server
            self.count("scope switches")
        super().use(conv, session, turn, tool, key)


class ScopingDeferral(Scoping):
    """Modes b + d for scoping: every scoped tool deferred; `load_context` returns the scope's
    module and the definitions of its tools not loaded yet, appended to the conversation."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        """As scoping with the module in the messages."""
        super().__init__(specs, module_in_messages=True)
        self.name = "scoping_deferral"
        self.description = (
            "scoping with every scoped tool deferred (defer_loading): load_context returns the "
            "scope's module and tool definitions; tools array and system prompt never change"
        )
        self.loaded: set[str] = set()

    def reset(self, session: Session) -> None:
        """No scope, nothing loaded."""
        super().reset(session)
        self.loaded = set()

    def tools(self) -> list[dict[str, Any]]:
        """Only load_context renders; the scoped tools are deferred."""
        return [self.schema["load_context"]]

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Switch scope (loading its definitions once per session) when needed, then call."""
        from attention_scoping.load_context import loaded_payload

        server = self.server_of[tool]
        if server != self.active:
            conv.send(self.tools(), self.system())
            call_id = conv.tool_call("load_context", {"name": server})
            payload = loaded_payload(
                self.mw.catalog, server, self.active, module=True, reopened=False
            )
            names = [n for n in self.mw.catalog.scopes[server].tools if n not in self.loaded]
            content = render_payload(payload)
            if names:
                content += "\n" + stable_json(self.schemas(names))
                self.loaded.update(names)
            conv.tool_result(call_id, "load_context", content)
            self.active = server
            self.count("scope switches")
        conv.send(self.tools(), self.system())
        self.run(conv, tool, key)


class _Gated(SessionStrategy):
    """Shared by the gate strategies: the decision over the real conversation and the pool."""

    def __init__(self, specs: Sequence[ToolSpec], gate: Any) -> None:
        """`gate` is a `ToolAttentionMiddleware` fitted on the catalog."""
        super().__init__(specs)
        self.gate = gate
        not_reads = [s.name for s in specs if s.risk != "read"]  # never named by the pool
        self.pool_text, _ = gate.pool(self.order, not_reads=not_reads)
        self.state: dict[str, Any] = {}
        self.shown: list[str] = []

    def reset(self, session: Session) -> None:
        """The session's agent state (what preconditions read)."""
        self.state = dict(session.task.state)
        self.shown = []

    def decide(self, conv: Conversation) -> list[str]:
        """The gate's shown tools for the conversation so far, in catalog order."""
        decision = self.gate.decide_names({**self.state, "messages": conv.messages}, self.order)
        return self.ordered(decision.shown)

    def system(self) -> str:
        """The user's prompt plus the summary pool, as the middleware appends it."""
        return "\n\n".join(p for p in (BASE_PROMPT, self.pool_text) if p)

    def tools(self) -> list[dict[str, Any]]:
        """The currently shown tools."""
        return self.schemas(self.shown)

    def refuse(self, conv: Conversation, tool: str, key: str) -> None:
        """The model calls a tool it saw only in the pool: refused, promoted next step."""
        from attention_scoping.gating.disclosure import not_available_payload

        call_id = conv.tool_call(tool, tool_arguments(self.specs[tool], key))
        payload = not_available_payload(tool, self.specs[tool].summary, self.shown)
        conv.tool_result(call_id, tool, render_payload(payload), error=True)

    def recover(self, conv: Conversation, tool: str, key: str) -> None:
        """After a refusal: one more call with the tool promoted, then run it."""
        conv.send(self.tools(), self.system())
        if tool in self.shown:
            self.run(conv, tool, key, "recovered")
        else:
            self.miss(conv)

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Call with the shown set; recover through the pool when the tool is listed there."""
        conv.send(self.tools(), self.system())
        if tool in self.shown:
            self.run(conv, tool, key)
        elif self.pool_text:
            self.refuse(conv, tool, key)
            self.after_refusal(conv, tool)
            self.recover(conv, tool, key)
        else:
            self.miss(conv)

    def after_refusal(self, conv: Conversation, tool: str) -> None:
        """Update the shown set after a refusal."""
        raise NotImplementedError


class PerCallGate(_Gated):
    """The shipped gate: a fresh decision before every call."""

    name = "per_call_gate"
    description = "the shipped ToolAttentionMiddleware: a new decision before every call"

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Decide before the call."""
        self.shown = self.decide(conv)
        super().use(conv, session, turn, tool, key)

    def after_refusal(self, conv: Conversation, tool: str) -> None:
        """Decide again: the refused tool is now requested."""
        self.shown = self.decide(conv)

    def play(self, session: Session, conv: Conversation) -> None:
        """As the base, deciding before the closing call too."""
        self.reset(session)
        for t, turn in enumerate(session.turns):
            conv.user(turn.text)
            for step, tool in enumerate(turn.tools):
                self.exposure["needed"] += 1
                self.use(conv, session, turn, tool, f"{session.id}:{t}:{step}")
            self.shown = self.decide(conv)
            conv.send(self.tools(), self.system())
            conv.answer(answer_text(f"{session.id}:{t}"))


class TurnGate(_Gated):
    """Mode a: one decision per user turn, kept for every call of the turn."""

    name = "turn_gate"
    description = "the gate deciding once per user turn (mode a); a refusal adds the tool"

    def open_turn(self, conv: Conversation, session: Session, turn: Turn) -> None:
        """Decide at the turn's first call."""
        self.shown = self.decide(conv)

    def after_refusal(self, conv: Conversation, tool: str) -> None:
        """Add the refused tool, drop nothing (as `ToolAttentionMiddleware(decide_per="turn")`)."""
        self.shown = self.ordered({*self.shown, tool})


class GrowOnlyGate(_Gated):
    """Modes a + c: decided per turn, a tool once sent stays (appended), budget then reset."""

    name = "grow_only_gate"

    def __init__(self, specs: Sequence[ToolSpec], gate: Any, *, budget: int, count: Any) -> None:
        """`budget`: schema tokens the grown tools array may reach before one reset."""
        super().__init__(specs, gate)
        self.budget = budget
        self.tokens = {n: count(stable_json(s)) for n, s in self.schema.items()}
        self.description = (
            f"mode a + grow-only disclosure (mode c) up to {budget:,} schema tokens, then a reset"
        )

    def _grow(self, names: Sequence[str]) -> None:
        grown = [*self.shown, *(n for n in names if n not in self.shown)]
        if sum(self.tokens[n] for n in grown) > self.budget:
            self.count("resets")
            grown = list(names)
        self.shown = grown

    def open_turn(self, conv: Conversation, session: Session, turn: Turn) -> None:
        """Add this turn's decision at the end of the tools array."""
        self._grow(self.decide(conv))

    def after_refusal(self, conv: Conversation, tool: str) -> None:
        """Append the refused tool."""
        self._grow([tool])


class GateDeferral(_Gated):
    """Modes a + b + d: every tool deferred; the gate's choices appended as a tool result."""

    name = "gate_deferral"
    description = (
        "all tools deferred (defer_loading); per turn the gate's new tools are appended to the "
        "conversation (no extra call); tools array and system prompt never change"
    )

    def tools(self) -> list[dict[str, Any]]:
        """Nothing loaded up front: the array (of deferred tools) renders to nothing."""
        return []

    def reset(self, session: Session) -> None:
        """Nothing loaded yet."""
        super().reset(session)
        self.loaded: set[str] = set()

    def _load(self, conv: Conversation, names: Sequence[str], key: str) -> None:
        new = [n for n in names if n not in self.loaded]
        if not new:
            return
        call_id = conv.tool_call("load_tools", {"names": new})
        conv.tool_result(call_id, "load_tools", stable_json(self.schemas(new)))
        self.loaded.update(new)
        self.count("tools loaded", len(new))

    def open_turn(self, conv: Conversation, session: Session, turn: Turn) -> None:
        """Append the definitions of the tools the gate promotes that are not loaded yet."""
        self._load(conv, self.decide(conv), str(conv.turn))

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Call; a tool not loaded is refused and its definition appended with the refusal."""
        from attention_scoping.gating.disclosure import not_available_payload

        conv.send(self.tools(), self.system())
        if tool in self.loaded:
            self.run(conv, tool, key)
            return
        call_id = conv.tool_call(tool, tool_arguments(self.specs[tool], key))
        payload = not_available_payload(tool, self.specs[tool].summary, sorted(self.loaded))
        content = render_payload(payload) + "\n" + stable_json([self.schema[tool]])
        conv.tool_result(call_id, tool, content, error=True)
        self.loaded.add(tool)
        conv.send(self.tools(), self.system())
        self.run(conv, tool, key, "recovered")

    def after_refusal(self, conv: Conversation, tool: str) -> None:
        """Not used: refusals are handled in `use`."""


class LazyDeferral(GateDeferral):
    """Every tool deferred and nothing loaded up front: the summary pool in the (fixed) system
    prompt names every tool; the first call of a tool is answered with its definition."""

    name = "lazy_deferral"
    description = (
        "all tools deferred, the summary pool in a fixed system prompt; a tool's definition is "
        "appended with the answer to its first call (one extra call per new tool, no ranking)"
    )

    def open_turn(self, conv: Conversation, session: Session, turn: Turn) -> None:
        """Load nothing ahead: tools are loaded on first use."""


class _Searching(SessionStrategy):
    """Shared by the gateway and the provider's tool search: ranked search over the catalog."""

    def __init__(self, specs: Sequence[ToolSpec], gateway: Any) -> None:
        """Search with `gateway` (a `ToolGateway` over the catalog, ranking with the gate's
        ranker)."""
        super().__init__(specs)
        self.gateway = gateway
        self.known: set[str] = set()
        self._searches: dict[tuple[str, int], dict[str, Any]] = {}

    def reset(self, session: Session) -> None:
        """Nothing discovered yet."""
        self.known = set()

    def search(self, query: str, limit: int) -> dict[str, Any]:
        """The gateway's search payload (memoized)."""
        key = (query, limit)
        if key not in self._searches:
            self._searches[key] = self.gateway.search(query, limit=limit)
        return self._searches[key]

    def discover(self, conv: Conversation, turn: Turn, tool: str) -> bool:
        """Search (twice at most: the request, then the tool's own summary) until `tool` is
        found; True when it was."""
        for query in (turn.text, self.specs[tool].summary or tool):
            conv.send(self.tools(), self.system())
            found = self.found(conv, query)
            if tool in found:
                return True
            self.count("searches that missed the tool")
        return False

    def found(self, conv: Conversation, query: str) -> list[str]:
        """Make one search call, append its result; the names found."""
        raise NotImplementedError

    def fetch(self, conv: Conversation, tool: str) -> None:
        """After `tool` was discovered, before its call (default: nothing, the search result
        carried its definition)."""

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Discover (and fetch) the tool once per session, then call it."""
        outcome = "at once"
        if tool not in self.known:
            if not self.discover(conv, turn, tool):
                self.miss(conv)
                return
            self.fetch(conv, tool)
            outcome = "recovered"
        conv.send(self.tools(), self.system())
        self.run(conv, tool, key, outcome)


class Gateway(_Searching):
    """search_tool_catalog -> get_tool_schema -> execute_tool."""

    name = "gateway"
    description = (
        "3 fixed gateway tools (search / schema / execute); fetched schemas stay in the history"
    )

    def __init__(self, specs: Sequence[ToolSpec], gateway: Any) -> None:
        """Price the three gateway tools."""
        from attention_scoping.adapters.tools import to_provider_schema
        from attention_scoping.gateway.tools import GATEWAY_PROMPT

        super().__init__(specs, gateway)
        self._tools = [to_provider_schema(t) for t in self.gateway.tools]
        self._system = f"{BASE_PROMPT}\n\n{GATEWAY_PROMPT}"

    def tools(self) -> list[dict[str, Any]]:
        """The three gateway tools."""
        return self._tools

    def system(self) -> str:
        """The user's prompt and the gateway's instructions."""
        return self._system

    def found(self, conv: Conversation, query: str) -> list[str]:
        """search_tool_catalog(query)."""
        call_id = conv.tool_call("search_tool_catalog", {"query": query})
        payload = self.search(query, self.gateway.limit)
        conv.tool_result(call_id, "search_tool_catalog", render_payload(payload))
        return [c["name"] for c in payload["candidates"]]

    def fetch(self, conv: Conversation, tool: str) -> None:
        """get_tool_schema([tool]), once per session."""
        conv.send(self.tools(), self.system())
        call_id = conv.tool_call("get_tool_schema", {"tool_names": [tool]})
        payload = render_payload(self.gateway.schema([tool]))
        conv.tool_result(call_id, "get_tool_schema", payload)
        self.known.add(tool)

    def run(self, conv: Conversation, tool: str, key: str, outcome: str = "at once") -> None:
        """The model calls `tool` through execute_tool and gets the gateway's payload (the
        tool's output, its status and `next_step`), as the real tool answers."""
        spec = self.specs[tool]
        args = {"tool_name": tool, "arguments": tool_arguments(spec, key)}
        call_id = conv.tool_call("execute_tool", args)
        output = tool_output(tool, spec.server or "", key)
        result = self.gateway.success(spec, _structured(output))
        conv.tool_result(call_id, "execute_tool", render_payload(result))
        self.exposure[outcome] += 1


class GatewayWithPool(Gateway):
    """The gateway with the gate's summary pool in its fixed system prompt: the model knows
    every tool's name, so it fetches the schema directly (no search) and then executes."""

    name = "gateway_with_pool"
    description = (
        "3 fixed gateway tools + the summary pool in the fixed system prompt: get_tool_schema "
        "then execute_tool (no search)"
    )

    signatures = False
    """Whether the pool lines show each tool's required arguments (`ToolGateway.prompt`)."""

    def __init__(self, specs: Sequence[ToolSpec], gateway: Any) -> None:
        """The user's prompt, then `gateway.prompt(pool=True, signatures=self.signatures)`."""
        super().__init__(specs, gateway)
        pool = gateway.prompt(pool=True, signatures=self.signatures)
        self._system = f"{BASE_PROMPT}\n\n{pool}"

    def discover(self, conv: Conversation, turn: Turn, tool: str) -> bool:
        """The pool names the tool: nothing to search."""
        return True


class GatewaySignatures(GatewayWithPool):
    """The gateway with the signature pool (`gateway.prompt(pool=True)`): a tool whose line
    shows every required argument is run at once through execute_tool; one with a `{…}`
    argument has its schema fetched first. A `misfire` share of the direct calls (seeded per
    call) send arguments the gateway refuses; the refusal carries the schema and the model
    calls again."""

    name = "gateway_signatures"
    description = (
        "3 fixed gateway tools + every tool's signature line in the fixed system prompt: "
        "execute_tool at once (get_tool_schema only for a {…} argument)"
    )

    signatures = True

    def __init__(self, specs: Sequence[ToolSpec], gateway: Any, *, misfire: float = 0.0) -> None:
        """The signature pool's prompt; `misfire` in [0, 1]."""
        super().__init__(specs, gateway)
        self.misfire = misfire

    def _refused(self, conv: Conversation, tool: str, key: str) -> None:
        """A direct call with a required argument left out (or, without any, an unknown one
        added), answered by the gateway's own check."""
        spec = self.specs[tool]
        args = tool_arguments(spec, key)
        if spec.required:
            args.pop(spec.required[-1], None)
        else:
            args["unknown_option"] = True
        call_id = conv.tool_call("execute_tool", {"tool_name": tool, "arguments": args})
        payload = self.gateway.check(tool, args)
        conv.tool_result(call_id, "execute_tool", render_payload(payload), error=True)
        self.count("direct calls refused")

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Call at once from the signature line; fetch the schema first only when the line
        cannot show an argument."""
        if tool in self.known or not self.specs[tool].signature_complete:
            super().use(conv, session, turn, tool, key)
            return
        self.known.add(tool)
        conv.send(self.tools(), self.system())
        if random.Random(f"misfire:{key}:{tool}").random() >= self.misfire:
            self.run(conv, tool, key)
            return
        self._refused(conv, tool, key)
        conv.send(self.tools(), self.system())
        self.run(conv, tool, key, "recovered")


class NativeToolSearch(_Searching):
    """The provider's tool search: all tools deferred; found definitions expanded in place."""

    name = "native_tool_search"
    description = (
        "provider-native deferral (tool search tool + defer_loading): one search call per "
        "undiscovered tool, 3 definitions expanded into the conversation"
    )
    limit = 3

    def tools(self) -> list[dict[str, Any]]:
        """Only the search tool renders; deferred tools are not in the prompt."""
        return [TOOL_SEARCH]

    def found(self, conv: Conversation, query: str) -> list[str]:
        """tool_search(query): the definitions of the 3 best matches."""
        call_id = conv.tool_call(TOOL_SEARCH["name"], {"query": query})
        names = [c["name"] for c in self.search(query, self.limit)["candidates"]]
        conv.tool_result(call_id, TOOL_SEARCH["name"], stable_json(self.schemas(names)))
        self.known.update(names)
        return names


def _structured(output: str) -> Any:
    """A tool output as the tool would return it to the gateway: the data itself when the text
    is JSON (a structured result is embedded, not quoted), else the text."""
    try:
        return json.loads(output)
    except ValueError:
        return output


def exposure_share(counts: Mapping[str, int]) -> float:
    """Share of needed tool uses where the model could call the tool (at once or after a
    refusal or a search)."""
    needed = counts.get("needed", 0)
    return (counts.get("at once", 0) + counts.get("recovered", 0)) / needed if needed else 1.0
