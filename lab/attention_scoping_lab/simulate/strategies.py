"""The four ways to expose the simulated catalog, each played over the tasks call by call.

A simulated model always knows which tool it needs (the task's gold sequence) and behaves as
a competent agent would under each strategy; what differs is what each model call carries:

- eager: every tool's schema on every call.
- scoped: servers as scopes (`AttentionScopingMiddleware`); one extra call to `load_context`
  whenever the next tool lives on another server.
- gated: the shipped `ToolAttentionMiddleware`, deciding before every call over the real
  conversation (user turns, tool calls, tool results). When the needed tool was not promoted,
  the model can call it only if the summary pool listed it: it is refused with the gate's
  `tool_not_available` payload, promoted, and called on the next step; otherwise it is a miss.
- gateway: the three `ToolGateway` tools; per new tool the model searches, fetches the schema
  (both payloads stay in the history and are re-sent with every later call of the task), then
  executes.

Every call also ends its turn with one answering call. Tokens are counted on the exact texts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from attention_scoping.common.tokens import TokenCounter
from attention_scoping.common.tool import ToolSpec
from attention_scoping.observe.tax import tools_json
from attention_scoping_lab.simulate.tasks import Task

SCOPE_DESCRIPTIONS = {
    "github": "GitHub: issues, pull requests, reviews, files, branches, commits and CI runs",
    "filesystem": "local files and folders: read, write, edit, move, search",
    "database": "the SQL databases: schemas, queries, table changes, backups",
    "slack": "Slack: channels, messages, threads, users, files",
    "web": "the web: search, fetch pages, screenshots, news and images",
    "jira": "Jira: tickets, comments, workflow, worklogs, projects, boards and sprints",
}
"""Scope descriptions for the capability index (one line per server)."""


@dataclass
class Trace:
    """Tokens of every model call of one task, grouped by turn."""

    turns: list[list[tuple[int, int]]] = field(default_factory=list)
    """Per turn, per call: (tool-definition tokens, other prompt tokens)."""

    def call(self, tools: int, prompt: int = 0) -> None:
        """Record one model call in the current turn."""
        self.turns[-1].append((tools, prompt))


class Strategy:
    """Base: plays tasks and keeps counters; subclasses implement `play`."""

    name = ""
    description = ""

    def __init__(self) -> None:
        """Start with empty counters."""
        self.counters: dict[str, int] = {}

    def count(self, key: str, n: int = 1) -> None:
        """Add to a named counter (misses, refusals, ...)."""
        self.counters[key] = self.counters.get(key, 0) + n

    def play(self, task: Task) -> Trace:
        """The calls of one task."""
        raise NotImplementedError


class _Schemas:
    """Tokens of tools arrays over the catalog, memoized by the tuple of names."""

    def __init__(self, specs: Sequence[ToolSpec], counter: TokenCounter) -> None:
        self.schema = {s.name: s.provider_schema() for s in specs}
        self.counter = counter
        self._memo: dict[tuple[str, ...], int] = {}

    def tokens(self, names: Sequence[str], extra: Sequence[dict[str, Any]] = ()) -> int:
        key = tuple(names) + tuple(json.dumps(e, sort_keys=True) for e in extra)
        if key not in self._memo:
            schemas = [*extra, *(self.schema[n] for n in names)]
            self._memo[key] = self.counter.count(tools_json(schemas)) if schemas else 0
        return self._memo[key]


class Eager(Strategy):
    """Every schema on every call."""

    name = "eager"
    description = "all 120 schemas on every call"

    def __init__(self, specs: Sequence[ToolSpec], counter: TokenCounter) -> None:
        """Price the whole array once."""
        super().__init__()
        self.tokens = _Schemas(specs, counter).tokens([s.name for s in specs])

    def play(self, task: Task) -> Trace:
        """One call per tool, one to answer."""
        trace = Trace()
        for turn in task.turns:
            trace.turns.append([])
            for _ in range(len(turn.tools) + 1):
                trace.call(self.tokens)
        return trace


class Scoped(Strategy):
    """Servers as scopes: the active server's tools plus `load_context`."""

    name = "scoped"
    description = "servers as scopes; load_context to switch"

    def __init__(self, specs: Sequence[ToolSpec], counter: TokenCounter) -> None:
        """Price each scope's tools array and system prompt once (the default layout,
        `compact`; every scope opened whole by the model's `load_context`)."""
        from attention_scoping.adapters.tools import to_provider_schema
        from attention_scoping.load_context import make_load_context_tool
        from attention_scoping.prompt import Layout, build_layers
        from attention_scoping.scopes import Scope, ScopeCatalog

        super().__init__()
        servers: dict[str, list[str]] = {}
        for spec in specs:
            servers.setdefault(spec.server or "other", []).append(spec.name)
        self.server_of = {s.name: s.server or "other" for s in specs}
        catalog = ScopeCatalog(
            [Scope(n, SCOPE_DESCRIPTIONS.get(n, ""), tools=t) for n, t in servers.items()]
        )
        layout: Layout = "compact"
        load_context = to_provider_schema(make_load_context_tool(catalog, layout))
        schemas = _Schemas(specs, counter)
        self.cost: dict[str | None, tuple[int, int]] = {}
        for scope in (None, *servers):
            names = servers.get(scope, []) if scope else []
            prompt = counter.count(build_layers(catalog, scope, layout, None).render())
            self.cost[scope] = (schemas.tokens(names, [load_context]), prompt)

    def play(self, task: Task) -> Trace:
        """Switch scope when the next tool lives elsewhere; the scope persists over turns."""
        trace = Trace()
        active: str | None = None
        for turn in task.turns:
            trace.turns.append([])
            for tool in turn.tools:
                if self.server_of[tool] != active:
                    trace.call(*self.cost[active])  # the model calls load_context
                    active = self.server_of[tool]
                    self.count("scope switches")
                trace.call(*self.cost[active])
            trace.call(*self.cost[active])
        return trace


class Gated(Strategy):
    """The shipped gate deciding before every call over the real conversation."""

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        counter: TokenCounter,
        *,
        summary_pool: str = "auto",
        ranker: Any = "default",
        cache: Any = None,
        name: str = "gated",
        description: str = "the shipped ToolAttentionMiddleware (defaults)",
    ) -> None:
        """Build and fit the gate on the catalog (preconditions from the specs)."""
        from attention_scoping.gating import ToolAttentionMiddleware

        super().__init__()
        self.name, self.description = name, description
        self.gate = ToolAttentionMiddleware(
            ranker=ranker,
            preconditions={s.name: s.preconditions for s in specs if s.preconditions},
            summary_pool=summary_pool,  # type: ignore[arg-type]
            cache=cache,
            emit_events=False,
        )
        self.gate.index.fit_catalog(list(specs))
        self.names = [s.name for s in specs]
        self.not_reads = [s.name for s in specs if s.risk != "read"]
        self.summaries = {s.name: s.summary for s in specs}
        self.schemas = _Schemas(specs, counter)
        self._ids = 0

    def _call_id(self) -> str:
        self._ids += 1
        return f"call_{self._ids}"

    def _decide(
        self, task: Task, messages: list[BaseMessage], trace: Trace
    ) -> tuple[set[str], bool]:
        decision = self.gate.decide_names({**task.state, "messages": messages}, self.names)
        pool, pool_tokens = self.gate.pool(self.names, not_reads=self.not_reads)
        trace.call(self.schemas.tokens(decision.shown) + pool_tokens)
        return set(decision.shown), bool(pool)

    def play(self, task: Task) -> Trace:
        """Decide before each call; recover through the pool when the tool is listed there."""
        from attention_scoping.common.errors import render_payload
        from attention_scoping.gating.disclosure import not_available_payload

        trace = Trace()
        messages: list[BaseMessage] = []
        for turn in task.turns:
            trace.turns.append([])
            messages.append(HumanMessage(turn.text))
            for tool in turn.tools:
                shown, pooled = self._decide(task, messages, trace)
                call = {"name": tool, "args": {}, "id": self._call_id(), "type": "tool_call"}
                if tool in shown:
                    self.count(f"{turn.kind}: exposed at once")
                elif pooled:
                    self.count(f"{turn.kind}: refused, then promoted")
                    payload = not_available_payload(tool, self.summaries[tool], sorted(shown))
                    messages.append(AIMessage("", tool_calls=[call]))
                    messages.append(
                        ToolMessage(
                            render_payload(payload),
                            tool_call_id=call["id"],
                            name=tool,
                            status="error",
                        )
                    )
                    shown, _ = self._decide(task, messages, trace)
                    call = {**call, "id": self._call_id()}
                    if tool not in shown:
                        self.count(f"{turn.kind}: missed")
                        continue
                else:
                    self.count(f"{turn.kind}: missed")
                    messages.append(AIMessage("I could not find a tool for that."))
                    continue
                messages.append(AIMessage("", tool_calls=[call]))
                messages.append(ToolMessage("ok", tool_call_id=call["id"], name=tool))
            self._decide(task, messages, trace)
            messages.append(AIMessage("Done."))
        return trace


class Gateway(Strategy):
    """search_tool_catalog -> get_tool_schema -> execute_tool, payloads kept in the history."""

    name = "gateway"
    description = "3 gateway tools + what the model fetches (kept in the history)"

    def __init__(
        self, specs: Sequence[ToolSpec], counter: TokenCounter, ranker: Any = "default"
    ) -> None:
        """Build the gateway over stand-in tools with the catalog's schemas; its search ranks
        with the gate's ranker (`ranker`, as `build_ranker` names it)."""
        from attention_scoping.adapters.tools import to_provider_schema
        from attention_scoping.gateway.tools import GATEWAY_PROMPT, ToolGateway
        from attention_scoping.gating import CatalogRanker
        from attention_scoping_lab.audit.figures import stub_tool

        super().__init__()
        self.gateway = ToolGateway([stub_tool(s) for s in specs], ranker=CatalogRanker(ranker))
        self.counter = counter
        self.summaries = {s.name: s.summary or s.name for s in specs}
        self.tools = counter.count(tools_json([to_provider_schema(t) for t in self.gateway.tools]))
        self.prompt = counter.count(GATEWAY_PROMPT)
        self._payloads: dict[tuple[str, str], tuple[int, list[str]]] = {}

    def _search(self, query: str) -> tuple[int, list[str]]:
        from attention_scoping.common.errors import render_payload

        key = ("search", query)
        if key not in self._payloads:
            payload = self.gateway.search(query)
            found = [c["name"] for c in payload["candidates"]]
            self._payloads[key] = (self.counter.count(render_payload(payload)), found)
        return self._payloads[key]

    def _schema(self, tool: str) -> int:
        from attention_scoping.common.errors import render_payload

        key = ("schema", tool)
        if key not in self._payloads:
            payload = self.gateway.schema([tool])
            self._payloads[key] = (self.counter.count(render_payload(payload)), [tool])
        return self._payloads[key][0]

    def play(self, task: Task) -> Trace:
        """Search and fetch each tool once per task; execute it every time it is used."""
        trace = Trace()
        carried = 0
        known: set[str] = set()
        for turn in task.turns:
            trace.turns.append([])
            for tool in turn.tools:
                if tool not in known:
                    trace.call(self.tools + carried, self.prompt)  # -> search_tool_catalog
                    tokens, found = self._search(turn.text)
                    carried += tokens
                    if tool not in found:
                        self.count("searches that missed the tool")
                        trace.call(self.tools + carried, self.prompt)  # a second search
                        carried += self._search(self.summaries[tool])[0]
                    trace.call(self.tools + carried, self.prompt)  # -> get_tool_schema
                    carried += self._schema(tool)
                    known.add(tool)
                trace.call(self.tools + carried, self.prompt)  # -> execute_tool
            trace.call(self.tools + carried, self.prompt)  # the answer
        return trace


def play_all(
    strategy: Strategy,
    tasks: Sequence[Task],
    progress: Callable[[str, int, int], None] | None = None,
) -> list[Trace]:
    """Play every task, reporting progress."""
    out = []
    for i, task in enumerate(tasks):
        out.append(strategy.play(task))
        if progress is not None:
            progress(f"simulating {strategy.name}", i + 1, len(tasks))
    return out
