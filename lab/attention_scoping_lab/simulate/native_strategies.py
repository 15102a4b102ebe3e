"""The provider-native disclosure modes (issue 27, `disclosure=`) as billed session set-ups.

Each mode keeps the tools array and the system prompt byte-identical for the whole session and
discloses what the gate or a scope decides at the tail of the conversation, as each provider
documents it (sources in docs/cost.md) and as the package builds it:

- anthropic: every tool in `tools` with `defer_loading: true` except the loaded ones
  (`load_context`, the gate's client-side search tool `search_tools`); deferred definitions
  are not rendered into the prompt. A disclosed tool's definition is expanded in place where
  its `tool_reference` block sits (in the `load_context` or search result), so it is billed
  once as new input and read from the cache on every later call.
- openai (Responses): one namespace per scope (split above 10 functions; the gate alone groups
  by server here), its functions deferred: the prompt carries each namespace's name and
  description and the client-executed `tool_search` tool; a `tool_search_output` appends the
  loaded definitions at the tail.
- allowed_tools (Chat Completions): the full tools array, the same on every call;
  `tool_choice: {"type": "allowed_tools", ...}` restricts what the model may call. The API
  applies the restriction as a mask (the tools array and so the cache are untouched), so the
  `tool_choice` itself is not billed as prompt.

The gate in a native mode has no summary pool. What it decides at a new user turn is disclosed
either by a search call the model makes (`gate_<mode>`: one model call, input and output
billed) or by a call-and-result pair the middleware puts in front of the model's reply
(`gate_<mode>_announced`: no call; `Disclosure.announce`, as built). A
needed tool the gate did not disclose costs a search call (the request, then the tool's
purpose: our ranker, exact names first). A scope switch is the `load_context` call the model
makes; its result references the scope's tools the thread has not disclosed yet.

Scoping's modes are the ones `attention_scoping.disclosure` builds on the core:
`scoping_anthropic_whole` is `Anthropic()` (every tool deferred but `Anthropic().loaded`, the
model's `load_context` result references the scope's tools the history has not disclosed, each
once), `scoping_anthropic_again` its first build (every tool of the scope again at each load,
kept to show why it was changed) and `scoping_allowed_tools` is `OpenAI()` (every schema on
every call, the scope in `tool_choice`). Issue 27's *ranked* scope disclosure (`scoping_anthropic`,
`scoping_openai`: the request's k best of a scope, the rest behind a search tool) and the scoping
middleware's old OpenAI namespaces (`scoping_openai_whole`, `scoping_openai_again`) are not built
on the core, so they are not simulated (docs/disclosure.md says why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from attention_scoping.common.errors import render_payload
from attention_scoping.common.tool import ToolSpec
from attention_scoping_lab.cost import stable_json
from attention_scoping_lab.simulate.conversation import Conversation
from attention_scoping_lab.simulate.session_strategies import (
    BASE_PROMPT,
    PerCallGate,
    Scoping,
    SessionStrategy,
    _Gated,
)
from attention_scoping_lab.simulate.sessions import Session
from attention_scoping_lab.simulate.tasks import Turn

Provider = Literal["anthropic", "openai"]

SEARCH_TOOL = "search_tools"
"""The gate's client-side search tool in the native modes (`attention_scoping.disclosure`)."""

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SEARCH_TOOL,
        "description": (
            "Find tools for a task and make them callable. Give what the user wants done, or "
            "the exact name of a tool from the list in the system prompt."
        ),
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Task or tool name."}},
            "required": ["query"],
        },
    },
}
"""The search tool as the model sees it (loaded, so rendered in the prompt)."""

OPENAI_TOOL_SEARCH: dict[str, Any] = {
    "type": "tool_search",
    "execution": "client",
    "description": "Load the functions of a namespace, or tools by name, before calling them.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}
"""OpenAI's tool search, executed by the client (our ranker answers it)."""

MODES: tuple[str, ...] = (
    "anthropic",
    "anthropic_announced",
    "anthropic_whole",
    "anthropic_again",
    "openai",
    "openai_announced",
    "allowed_tools",
)
"""Name suffixes of the disclosure-mode strategies (`gate_<mode>`, `scoping_<mode>`)."""


def is_mode_strategy(name: str) -> bool:
    """Whether `name` is one of the disclosure-mode strategies."""
    head, _, mode = name.partition("_")
    return head in ("gate", "scoping") and mode in MODES


NAMESPACE_SIZE = 10
"""Functions per OpenAI namespace at most (the guide recommends fewer than 10 per namespace)."""


def definition(schema: dict[str, Any], provider: Provider) -> dict[str, Any]:
    """A tool's definition as `provider` expands it into the conversation (Anthropic:
    name, description, input_schema; OpenAI Responses: a flat function)."""
    fn = schema.get("function", schema)
    if provider == "anthropic":
        return {
            "name": fn["name"],
            "description": fn.get("description", ""),
            "input_schema": fn.get("parameters", {}),
        }
    return {
        "type": "function",
        "name": fn["name"],
        "description": fn.get("description", ""),
        "parameters": fn.get("parameters", {}),
    }


def namespaces(
    specs: Sequence[ToolSpec], descriptions: dict[str, str]
) -> list[tuple[str, str, list[str]]]:
    """OpenAI namespaces: one per server (scope), split into parts of at most
    `NAMESPACE_SIZE` functions: (name, description, function names)."""
    servers: dict[str, list[str]] = {}
    for spec in specs:
        servers.setdefault(spec.server or "other", []).append(spec.name)
    out = []
    for server, names in servers.items():
        parts = [names[i : i + NAMESPACE_SIZE] for i in range(0, len(names), NAMESPACE_SIZE)]
        for i, part in enumerate(parts):
            name = server if len(parts) == 1 else f"{server}_{i + 1}"
            out.append((name, descriptions.get(server, server), part))
    return out


def rendered_namespaces(groups: Sequence[tuple[str, str, list[str]]]) -> list[dict[str, Any]]:
    """What the prompt carries of each namespace: its name and description (the deferred
    functions inside are not shown until a tool search loads them)."""
    return [{"type": "namespace", "name": n, "description": d} for n, d, _ in groups]


class _Disclosing(SessionStrategy):
    """Shared by the native modes: what the history has disclosed, and how a disclosure is
    added (a model call, or an announced pair)."""

    provider: Provider
    round_trips: bool
    disclosed: set[str]
    _tools: list[dict[str, Any]]

    def reset(self, session: Session) -> None:
        """Nothing disclosed yet (and whatever the strategy's other base resets)."""
        super().reset(session)
        self.disclosed = set()

    def tools(self) -> list[dict[str, Any]]:
        """What the prompt renders: the loaded tools only (deferred ones are not rendered;
        OpenAI: the namespaces and its tool search)."""
        return self._tools

    def expanded(self, names: Sequence[str], text: str | None = None) -> str:
        """The result content once the provider expands it: `text` (a scope's module and
        breadcrumb) then the definitions of `names`, in place."""
        defs = [definition(self.schema[n], self.provider) for n in names]
        parts = [p for p in (text, stable_json(defs) if defs else "") if p]
        return "\n".join(parts)

    def disclose(
        self,
        conv: Conversation,
        tool: str,
        args: dict[str, Any],
        names: Sequence[str],
        *,
        text: str | None = None,
        call: tuple[list[dict[str, Any]], str] | None = None,
        again: bool = False,
    ) -> None:
        """Append `tool`'s call and its result disclosing `names` (those not disclosed yet;
        with `again`, all of them, expanded once more).

        `call` is the request (tools, system) the model made the call with; None when the
        middleware announces the pair itself (no model call)."""
        new = list(names) if again else [n for n in names if n not in self.disclosed]
        if call is not None:
            conv.send(*call)
            self.count("disclosure calls")
        else:
            self.count("announced disclosures")
        call_id = conv.tool_call(tool, args)
        conv.tool_result(call_id, tool, self.expanded(new, text))
        self.disclosed.update(new)
        self.count("tools disclosed", len(new))

    def call_after_search(
        self,
        conv: Conversation,
        tool: str,
        key: str,
        queries: Sequence[str],
        search: Callable[[str], None],
    ) -> None:
        """Call `tool` at once when disclosed; otherwise `search` with each query in turn (a
        model call each) until it is, then call it; a miss when no query loads it."""
        outcome = "at once"
        if tool not in self.disclosed:
            outcome = "recovered"
            for query in queries:
                search(query)
                if tool in self.disclosed:
                    break
                self.count("searches that missed the tool")
            else:
                self.miss(conv)
                return
        conv.send(self.tools(), self.system())
        self.run(conv, tool, key, outcome)


class NativeGate(_Disclosing, _Gated):
    """The gate with `disclosure="anthropic"` or `"openai"` (`SummaryPool(disclosure=...)`):
    tools and system prompt fixed, no summary pool; at each user turn the gate's new tools are
    disclosed by a search pair at the tail; a needed tool it did not disclose is searched for
    with the request, then with the tool's purpose (our ranker: exact names first, then the
    gate's k best above its threshold)."""

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        gate: Any,
        provider: Provider,
        *,
        round_trips: bool = True,
    ) -> None:
        """`gate`: the fitted `ToolAttentionMiddleware` (decisions, and the search's ranker)."""
        from attention_scoping.gating.exact import ExactNames
        from attention_scoping_lab.simulate.strategies import SCOPE_DESCRIPTIONS

        super().__init__(specs, gate)
        self.provider = provider
        self.round_trips = round_trips
        self.disclosed = set()
        self._exact = ExactNames(self.order)
        self._found: dict[str, list[str]] = {}
        if provider == "anthropic":
            self._tools = [SEARCH_SCHEMA]
            self.search_name = SEARCH_TOOL
        else:
            groups = namespaces(specs, SCOPE_DESCRIPTIONS)
            self._tools = [*rendered_namespaces(groups), OPENAI_TOOL_SEARCH]
            self.search_name = "tool_search"
        suffix = "" if round_trips else "_announced"
        self.name = f"gate_{provider}{suffix}"
        how = (
            "a search call per new decision"
            if round_trips
            else "decisions announced as a pair in the reply, no call"
        )
        self.description = (
            f"the gate, disclosure={provider!r}: tools and system prompt fixed (no pool), per "
            f"turn the gate's new tools disclosed at the tail ({how}); a missed tool searched for"
        )

    def system(self) -> str:
        """The user's prompt alone: no summary pool in the native modes."""
        return BASE_PROMPT

    def ranking(self, query: str) -> tuple[list[str], list[tuple[str, float]]]:
        """The tools `query` names exactly, and every tool with its score, best first."""
        names = self.order
        exact = [names[i] for i in self._exact.rows(query)]
        scores = self.gate.index.scores(query, names)
        best = sorted(range(len(names)), key=lambda i: (-float(scores[i]), i))
        return exact, [(names[i], float(scores[i])) for i in best]

    def search(self, query: str) -> list[str]:
        """What the search tool loads for `query`: tools the query names exactly, then the
        gate's k best ranked at or above its threshold (memoized)."""
        found = self._found.get(query)
        if found is None:
            exact, ranked = self.ranking(query)
            top = ranked[: self.gate.k]
            found = exact + [n for n, s in top if s >= self.gate.threshold and n not in exact]
            self._found[query] = found
        return found

    def _searched(self, conv: Conversation, query: str, names: list[str], *, call: bool) -> None:
        text = render_payload({"status": "ok", "query": query, "loaded": names})
        request = (self.tools(), self.system()) if call else None
        self.disclose(conv, self.search_name, {"query": query}, names, text=text, call=request)

    def open_turn(self, conv: Conversation, session: Session, turn: Turn) -> None:
        """The gate decides on the new turn; its tools not yet disclosed are disclosed."""
        decided = self.decide(conv)
        if any(n not in self.disclosed for n in decided):
            self._searched(conv, turn.text, decided, call=self.round_trips)

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Call a disclosed tool at once; otherwise search (one model call each: the request,
        then the tool's purpose) until it is loaded, then call it."""
        queries = (turn.text, self.specs[tool].summary or tool)
        self.call_after_search(
            conv, tool, key, queries, lambda q: self._searched(conv, q, self.search(q), call=True)
        )

    def after_refusal(self, conv: Conversation, tool: str) -> None:
        """Not used: a missing tool is searched for, not refused."""


ScopeMode = Literal["whole", "again"]
"""What a native scope discloses at a load: `whole` (`Anthropic()`: every tool of the scope not
disclosed yet) or `again` (every tool of the scope at each load: the first build)."""

SCOPE_SUFFIX: dict[str, str] = {"whole": "_whole", "again": "_again"}


class NativeScoping(_Disclosing, Scoping):
    """Scoping with `disclosure=Anthropic()`: tools and prompt never change (every tool deferred
    but `Anthropic().loaded`); a scope switch is the model's `load_context` call, whose result
    carries the scope's module and references the scope's tools (`mode`: the ones not disclosed
    yet, as built, or all of them again), expanded at the tail."""

    def __init__(self, specs: Sequence[ToolSpec], *, mode: ScopeMode = "whole") -> None:
        """Servers as scopes, the module delivered in the `load_context` result."""
        from attention_scoping.disclosure import Anthropic
        from attention_scoping_lab.audit.figures import stub_tool

        super().__init__(specs, module_in_messages=True)
        built = Anthropic()
        self.provider = "anthropic"
        self.round_trips = True
        self.disclosed = set()
        self.registered = [stub_tool(s) for s in specs]
        self._tools = [self.schema[n] for n in sorted(built.loaded) if n in self.schema]
        self._system = self.mw.prompt(None, BASE_PROMPT)
        self.mode = mode
        self.again = mode == "again"
        self.name = f"scoping_{built.mode}{SCOPE_SUFFIX[mode]}"
        which = {
            "whole": "the scope's new definitions (as built)",
            "again": "every tool definition of the scope (the first build)",
        }[mode]
        self.description = (
            f"scoping, disclosure=Anthropic(): tools and system prompt fixed; each load_context "
            f"result carries the module and {which}, at the tail"
        )

    def _load(self, conv: Conversation, turn: Turn, server: str) -> None:
        """The model's `load_context` call and its result (module, breadcrumb, references to
        the scope's tools)."""
        from attention_scoping.load_context import loaded_payload

        payload = loaded_payload(self.mw.catalog, server, self.active, module=True, reopened=False)
        text = render_payload(payload)
        names = list(self.mw.catalog.scopes[server].tools)
        request = (self.tools(), self.system())
        args = {"name": server}
        self.disclose(conv, "load_context", args, names, text=text, call=request, again=self.again)
        self.active = server
        self.count("scope switches")

    def system(self) -> str:
        """The fixed system prompt (the stable layout: no module in it)."""
        return self._system

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Switch scope when the tool lives elsewhere (the model's load_context call, which
        discloses every tool of the scope), then call the tool."""
        if self.server_of[tool] != self.active:
            self._load(conv, turn, self.server_of[tool])
        conv.send(self.tools(), self.system())
        self.run(conv, tool, key)


class AllowedToolsGate(PerCallGate):
    """The gate with `disclosure="allowed_tools"`: every schema on every call (the same array
    as eager), the gate's decision per call in `tool_choice` (not billed: a mask)."""

    name = "gate_allowed_tools"
    description = (
        "the gate, disclosure='allowed_tools': all 120 schemas on every call, the decision in "
        "tool_choice; a needed tool left out costs one refused call, then it is allowed"
    )

    def __init__(self, specs: Sequence[ToolSpec], gate: Any) -> None:
        """As the per-call gate; no summary pool (every schema is in the prompt)."""
        super().__init__(specs, gate)
        self._all = self.schemas(self.order)

    def use(self, conv: Conversation, session: Session, turn: Turn, tool: str, key: str) -> None:
        """Decide, call; a tool outside `tool_choice` is refused once (the model sees its
        schema, so it asks for it), then allowed by the next decision."""
        self.shown = self.decide(conv)
        conv.send(self.tools(), self.system())
        if tool in self.shown:
            self.run(conv, tool, key)
            return
        self.refuse(conv, tool, key)
        self.after_refusal(conv, tool)
        self.recover(conv, tool, key)

    def tools(self) -> list[dict[str, Any]]:
        """The whole catalog, always."""
        return self._all

    def system(self) -> str:
        """The user's prompt alone, fixed."""
        return BASE_PROMPT


class AllowedToolsScoping(Scoping):
    """Scoping with `disclosure=OpenAI()`: load_context and every schema on every call, in one
    fixed order; the active scope's tools in `tool_choice` (`allowed_tools`); the module in the
    load_context result."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        """Servers as scopes, the stable layout."""
        super().__init__(specs, module_in_messages=True)
        self._all = self.schemas(["load_context", *self.order])
        self.name = "scoping_allowed_tools"
        self.description = (
            "scoping, disclosure=OpenAI(): load_context and all 120 schemas on every "
            "call, the scope in tool_choice; one load_context call per switch"
        )

    def tools(self) -> list[dict[str, Any]]:
        """load_context and the whole catalog, always."""
        return self._all


def native_strategies(specs: Sequence[ToolSpec], gate: Any) -> list[Any]:
    """Every disclosure mode's gate and scoping set-up, in report order."""
    return [
        NativeGate(specs, gate, "anthropic"),
        NativeGate(specs, gate, "anthropic", round_trips=False),
        NativeScoping(specs, mode="whole"),
        NativeScoping(specs, mode="again"),
        NativeGate(specs, gate, "openai"),
        NativeGate(specs, gate, "openai", round_trips=False),
        AllowedToolsGate(specs, gate),
        AllowedToolsScoping(specs),
    ]
