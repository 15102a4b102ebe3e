"""The ways of exposing a suite's tools that the eval compares, each built as a real agent.

Every strategy is `create_agent` with the package's own middleware, the same model, the same
tasks; the eval's `EvalRecorder` is appended last (innermost) so it sees what each model call
really carried. Other strategies plug in with `register_strategy` (e.g. the cache-stable one).

- eager: every tool on every call.
- scoped: `AttentionScopingMiddleware` (the suite's scopes + `load_context`) with
  `layout="layered"` (capability index, core and the active module in the system prompt).
- scoped-compact: the same with `layout="compact"` (your prompt alone; the scopes described
  by `load_context`): the package's default configuration.
- scoped-model, scoped-compact-model: the two above with `navigation="model"`: no
  pre-selection and no start set; the model opens every scope itself with `load_context` (the
  candidates the default navigation is chosen against).
- gated: `ToolAttentionMiddleware` over every tool (intent ranking, top-k full schemas).
- scoped+gated: both, scoping outermost.
- gateway: `ToolGateway`'s search / schema / execute tools only.
- gateway-pool: the same with `gateway.prompt(pool=True)`: every tool's signature line in the
  system prompt, so the model can call `execute_tool` at once, and `GatewayRoutingMiddleware`
  (a catalog tool called by its own name runs through `execute_tool`): the recommended set-up
  of docs/cost.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attention_scoping_lab.eval.suite import Suite

if TYPE_CHECKING:
    from langchain.agents.middleware.types import AgentMiddleware


@dataclass(frozen=True)
class StrategyOptions:
    """Knobs shared by the strategies (ranker and k of the gate; the ranker of the gateway's
    search too)."""

    ranker: str = "default"
    k: int | None = None
    parse_text_calls: bool = False
    """The run converts text tool calls (set by the runner from `EvalOptions`)."""
    extra: dict[str, Any] = field(default_factory=dict)


Builder = Callable[[Suite, Any, Sequence[Any], StrategyOptions], Any]
"""`(suite, model, tail_middleware, options) -> compiled agent`."""


@dataclass(frozen=True)
class Strategy:
    """A named way of exposing tools; `needs_scopes` strategies skip suites without scopes."""

    name: str
    description: str
    build: Builder
    needs_scopes: bool = False


STRATEGIES: dict[str, Strategy] = {}
"""Registered strategies by name, in registration order."""


def register_strategy(
    name: str, build: Builder, description: str, *, needs_scopes: bool = False
) -> Strategy:
    """Add (or replace) a strategy the eval can run by name."""
    strategy = Strategy(name, description, build, needs_scopes)
    STRATEGIES[name] = strategy
    return strategy


def create_eval_agent(
    model: Any,
    tools: Sequence[Any],
    prompt: str,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
) -> Any:
    """`create_agent` as every strategy builds it (with a checkpointer, for multi-turn tasks);
    pass the eval's `tail` middleware last in `middleware`."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    return create_agent(
        model,
        tools=list(tools),
        system_prompt=prompt,
        middleware=list(middleware),
        checkpointer=InMemorySaver(),
    )


def _scoping(suite: Suite, **options: Any) -> AgentMiddleware[Any, Any, Any]:
    from attention_scoping.scoping.middleware import AttentionScopingMiddleware

    if not suite.scopes:
        msg = f"suite {suite.name!r} has no scopes"
        raise ValueError(msg)
    return AttentionScopingMiddleware(list(suite.scopes), tools=list(suite.tools), **options)


def _gate(suite: Suite, options: StrategyOptions) -> AgentMiddleware[Any, Any, Any]:
    from attention_scoping.gating.middleware import ToolAttentionMiddleware

    kwargs: dict[str, Any] = {"ranker": options.ranker, "tools": list(suite.tools)}
    if options.k is not None:
        kwargs["k"] = options.k
    return ToolAttentionMiddleware(**kwargs)


def build_eager(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
    """Every tool on every call."""
    return create_eval_agent(model, suite.tools, suite.system_prompt, tail)


def scoped_builder(**scoping: Any) -> Builder:
    """A builder of the suite's scopes behind `load_context`, its `AttentionScopingMiddleware`
    given `scoping` (e.g. `layout="compact"`, `layout=Layout(core_prompt=...)`): `scoped` and its
    variants."""

    def build(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
        """The suite's scopes behind `load_context`."""
        middleware = [_scoping(suite, **scoping), *tail]
        return create_eval_agent(model, suite.tools, suite.system_prompt, middleware)

    return build


build_scoped = scoped_builder(layout="layered")
"""The suite's scopes behind `load_context`, the layered prompt layout."""

build_scoped_compact = scoped_builder(layout="compact")
"""The suite's scopes with the compact prompt layout (the default configuration)."""

build_scoped_model = scoped_builder(navigation="model", layout="layered")
"""The suite's scopes, navigated by the model's own `load_context` calls only."""

build_scoped_compact_model = scoped_builder(navigation="model", layout="compact")
"""The compact layout, navigated by the model's own `load_context` calls only."""


def build_gated(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
    """Intent gating over every tool."""
    return create_eval_agent(
        model, suite.tools, suite.system_prompt, [_gate(suite, options), *tail]
    )


def build_scoped_gated(
    suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions
) -> Any:
    """Scopes first, then the gate inside the active scope."""
    middleware = [_scoping(suite), _gate(suite, options), *tail]
    return create_eval_agent(model, suite.tools, suite.system_prompt, middleware)


def gateway_builder(*, pool: bool) -> Builder:
    """A builder of the gateway's three tools over the suite's tools (which run inside
    `execute_tool`); with `pool`, the system prompt lists every tool with its required
    arguments (`gateway.prompt(pool=True)`) instead of `GATEWAY_PROMPT`, and a call of a
    catalog tool by its own name is routed through `execute_tool` (`GatewayRoutingMiddleware`)."""

    def build(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
        """The gateway's three tools."""
        from attention_scoping.gateway.tools import ToolGateway
        from attention_scoping.hesitation.repeats import RepeatedCallMiddleware

        ranker: Any = None
        if options.ranker != "default":
            from attention_scoping.gating.catalog_ranker import CatalogRanker

            ranker = CatalogRanker(options.ranker)
        gateway = ToolGateway(list(suite.tools), ranker=ranker)
        for guard in [m for m in tail if isinstance(m, RepeatedCallMiddleware)]:
            guard.learn(gateway.catalog.specs.values())  # reads through execute_tool are reads
        prompt = f"{suite.system_prompt}\n\n{gateway.prompt(pool=pool)}"
        if not pool:
            return create_eval_agent(model, gateway.tools, prompt, tail)
        from attention_scoping.gateway.routing import GatewayRoutingMiddleware

        # Innermost, so the recorder sees the routed execute_tool call.
        routing = GatewayRoutingMiddleware(gateway, parse_text_calls=options.parse_text_calls)
        return create_eval_agent(model, gateway.tools, prompt, [*tail, routing])

    return build


build_gateway = gateway_builder(pool=False)
"""Only the gateway's three tools, searched first."""

build_gateway_pool = gateway_builder(pool=True)
"""The gateway's three tools with the signature pool in the system prompt."""


register_strategy("eager", build_eager, "every tool on every call")
register_strategy("scoped", build_scoped, "scopes + load_context", needs_scopes=True)
register_strategy(
    "scoped-compact",
    build_scoped_compact,
    "scopes + load_context, compact prompt",
    needs_scopes=True,
)
register_strategy(
    "scoped-model",
    build_scoped_model,
    "scopes opened by the model's load_context only",
    needs_scopes=True,
)
register_strategy(
    "scoped-compact-model",
    build_scoped_compact_model,
    "scopes opened by the model's load_context only, compact prompt",
    needs_scopes=True,
)
register_strategy("gated", build_gated, "intent gate over every tool")
register_strategy(
    "scoped+gated", build_scoped_gated, "scopes, then the gate inside", needs_scopes=True
)
register_strategy("gateway", build_gateway, "search / schema / execute")
register_strategy(
    "gateway-pool", build_gateway_pool, "gateway + every tool's signature line in the prompt"
)

DEFAULT_STRATEGIES = (
    "eager",
    "scoped",
    "scoped-compact",
    "gated",
    "scoped+gated",
    "gateway",
    "gateway-pool",
)
