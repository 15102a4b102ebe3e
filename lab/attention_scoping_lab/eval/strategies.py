"""The ways of exposing a suite's tools that the eval compares, each built as a real agent.

Every strategy is `create_agent` with the package's own middleware, the same model, the same
tasks; the eval's `EvalRecorder` is appended last (innermost) so it sees what each model call
really carried. Other strategies plug in with `register_strategy` (e.g. the cache-stable one).

- eager: every tool on every call.
- scoped: `attention_scoping.middleware.AttentionScopingMiddleware` (the suite's scopes +
  `load_context`, the default `LexicalSelector` and `Rewrite` disclosure) with
  `layout="layered"` (capability index, core and the active module in the system prompt).
- scoped-compact: the same with `layout="compact"` (your prompt alone; the scopes described
  by `load_context`): the package's default configuration.
- scoped-model, scoped-compact-model: the two above with `selector=None`: no selection; the
  model opens every scope itself with `load_context` (the candidates the default is chosen
  against).
- gated: `ToolAttentionMiddleware` over every tool (intent ranking, top-k full schemas).
- scoped+gated: both, scoping outermost.
- gateway: `ToolGateway`'s search / schema / execute tools only.
- gateway-pool: the same with `gateway.prompt(pool=True)`: every tool's signature line in the
  system prompt, so the model can call `execute_tool` at once, and `GatewayRoutingMiddleware`
  (a catalog tool called by its own name runs through `execute_tool`): the recommended set-up
  of docs/cost.md.
- scoped-anthropic, scoped-openai: `scoped` with `disclosure=attention_scoping.disclosure.
  Anthropic()` (every tool deferred, the shown ones referenced at the tail; needs
  `ChatAnthropic`) or `OpenAI()` (every tool, the shown ones in `tool_choice` `allowed_tools`;
  needs `ChatOpenAI`, on api.openai.com unless `StrategyOptions(extra={"native_endpoint":
  True})`). gated-anthropic, gated-openai, gated-allowed-tools: `gated` with the gate's own
  `SummaryPool(disclosure=<mode>)`. Issue 27: the provider's own deferral keeps the tools array
  and system prompt fixed. Every other strategy keeps the core's `Rewrite` disclosure (the gate
  pins `disclosure="rewrite"`), so through `--bridge anthropic` they measure what they measure
  on Chat Completions. Each is skipped, with the reason, when the eval's chat model cannot
  carry its mode (`eval --bridge anthropic` gives every strategy `ChatAnthropic` on a local
  Messages API in front of the endpoint, `anthropic_bridge`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from attention_scoping_lab.eval.suite import Suite

if TYPE_CHECKING:
    from langchain.agents.middleware.types import AgentMiddleware


REWRITE: Final = "rewrite"
"""The gate's disclosure in every strategy but the disclosure ones: the request's tools and
prompt rewritten, whatever the chat model class (the gate's default, "auto", follows the class).
The scoping middleware's default (`attention_scoping.middleware.Rewrite`) is the same."""


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
    """The suite's `AttentionScopingMiddleware` over a `ScopeCatalog` that knows the suite's
    tool objects (so scopes naming tools by name are checked now, and the selector reads their
    descriptions); `options` are the middleware's (`layout=`, `selector=`, `disclosure=`; the
    core defaults otherwise: `LexicalSelector`, `Rewrite`)."""
    from attention_scoping.middleware import AttentionScopingMiddleware
    from attention_scoping.scopes import ScopeCatalog

    if not suite.scopes:
        msg = f"suite {suite.name!r} has no scopes"
        raise ValueError(msg)
    catalog = ScopeCatalog(list(suite.scopes), tools=list(suite.tools))
    return AttentionScopingMiddleware(catalog, **options)


def _gate(suite: Suite, options: StrategyOptions, **extra: Any) -> AgentMiddleware[Any, Any, Any]:
    """The gate over the suite's tools. Without a `disclosure` in `extra` it rewrites the
    request (`SummaryPool(disclosure="rewrite")` with the default pool): the middleware's own
    default, "auto", would pick the anthropic mode on `ChatAnthropic` (`--bridge anthropic`),
    and `gated` must stay what it names on every model."""
    import dataclasses

    from attention_scoping.gating.middleware import ToolAttentionMiddleware
    from attention_scoping.gating.options import DEFAULT_SUMMARY_POOL, POOL_PRESETS, SummaryPool

    kwargs: dict[str, Any] = {"ranker": options.ranker, "tools": list(suite.tools), **extra}
    if options.k is not None:
        kwargs["k"] = options.k
    rewritable = "disclosure" in {f.name for f in dataclasses.fields(SummaryPool)}
    if rewritable and "summary_pool" not in kwargs and "disclosure" not in kwargs:
        pool = POOL_PRESETS[DEFAULT_SUMMARY_POOL]
        kwargs["summary_pool"] = dataclasses.replace(pool, disclosure=REWRITE)
    return ToolAttentionMiddleware(**kwargs)


def build_eager(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
    """Every tool on every call."""
    return create_eval_agent(model, suite.tools, suite.system_prompt, tail)


def scoped_builder(**scoping: Any) -> Builder:
    """A builder of the suite's scopes behind `load_context`, its `AttentionScopingMiddleware`
    given `scoping` (e.g. `layout="compact"`, `selector=None`): `scoped` and its variants."""

    def build(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
        """The suite's scopes behind `load_context`."""
        middleware = [_scoping(suite, **scoping), *tail]
        return create_eval_agent(model, suite.tools, suite.system_prompt, middleware)

    return build


build_scoped = scoped_builder(layout="layered")
"""The suite's scopes behind `load_context`, the layered prompt layout."""

build_scoped_compact = scoped_builder(layout="compact")
"""The suite's scopes with the compact prompt layout (the default configuration)."""

build_scoped_model = scoped_builder(selector=None, layout="layered")
"""The suite's scopes, navigated by the model's own `load_context` calls only."""

build_scoped_compact_model = scoped_builder(selector=None, layout="compact")
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
        from attention_scoping.gateway.tools import EXECUTE_TOOL, ToolGateway
        from attention_scoping.hesitation.repeats import RepeatedCallMiddleware

        ranker: Any = None
        if options.ranker != "default":
            from attention_scoping.gating.catalog_ranker import CatalogRanker

            ranker = CatalogRanker(options.ranker)
        gateway = ToolGateway(list(suite.tools), ranker=ranker)
        for guard in [m for m in tail if isinstance(m, RepeatedCallMiddleware)]:
            guard.learn(suite.tools, execute_tool=EXECUTE_TOOL)  # reads through it stay reads
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


DISCLOSURE_STRATEGY_MODES: dict[str, str] = {
    "anthropic": "anthropic",
    "openai": "openai",
    "allowed-tools": "allowed_tools",
}
"""Strategy-name suffix -> the gate's `SummaryPool(disclosure=)` mode (`gated-<suffix>`)."""

SCOPED_DISCLOSURE_MODES: dict[str, str] = {"anthropic": "anthropic", "openai": "openai"}
"""Strategy-name suffix -> the `attention_scoping.disclosure` mode of `scoped-<suffix>`:
`Anthropic()` or `OpenAI()` (which is `allowed_tools`)."""

SCOPED_MODEL_CLASS: dict[str, str] = {"anthropic": "ChatAnthropic", "openai": "ChatOpenAI"}
"""The chat model class each scoped mode needs."""


def _unavailable(mode: str, why: str) -> ValueError:
    return ValueError(f"disclosure={mode!r} is not available: {why}")


def scoped_disclosure(mode: str, model: Any) -> Any:
    """`Anthropic()` or `OpenAI()` for `scoped-<mode>`.

    Raises:
        ValueError: `model` is not the chat model class the mode needs (a mode sent to another
            provider would fail there or, on Chat Completions, be ignored).
    """
    from attention_scoping.disclosure import Anthropic, OpenAI
    from attention_scoping.disclosure.auto import class_names

    needed = SCOPED_MODEL_CLASS[mode]
    if needed not in class_names(model):
        why = f"it needs {needed}, the eval's model is {type(model).__name__}"
        raise _unavailable(mode, why)
    return Anthropic() if mode == "anthropic" else OpenAI()


def disclosure_options(kind: str, mode: str, model: Any) -> dict[str, Any]:
    """The keyword arguments that give the `scoped` (kind "scoped": a core `Disclosure`
    object) or `gated` middleware `disclosure=mode` (the gate takes it as
    `SummaryPool(disclosure=...)`).

    Raises:
        ValueError: (the runner skips the strategy with this reason) `model` cannot carry
            `mode`.
    """
    if kind == "scoped":
        return {"disclosure": scoped_disclosure(mode, model)}
    from attention_scoping.disclosure.base import resolve_disclosure
    from attention_scoping.gating.options import SummaryPool

    try:
        resolve_disclosure(mode, model)  # the model cannot carry it (modes it can named)
    except ValueError as exc:
        raise _unavailable(mode, str(exc)) from exc
    return {"summary_pool": SummaryPool(disclosure=mode)}  # type: ignore[arg-type]


OPENAI_HOST = "api.openai.com"
"""The one endpoint known to implement `tool_choice: {"type": "allowed_tools"}`."""


def check_endpoint_mode(mode: str, model: Any, options: StrategyOptions) -> None:
    """Refuse `allowed_tools` on an OpenAI-compatible endpoint other than OpenAI's own (a local
    server may ignore the restriction and show every tool) unless the run vouches for it with
    `StrategyOptions(extra={"native_endpoint": True})` (the scripted test servers). The
    anthropic mode needs no check here: its model class decides, and `ChatAnthropic` on the
    eval's bridge carries it (the bridge applies the deferral itself)."""
    if mode != "allowed_tools" or options.extra.get("native_endpoint"):
        return
    from urllib.parse import urlparse

    base = getattr(model, "openai_api_base", None) or f"https://{OPENAI_HOST}/v1"
    host = urlparse(str(base)).hostname or ""
    if host != OPENAI_HOST:
        msg = (
            f"disclosure='allowed_tools' needs an endpoint that enforces tool_choice "
            f"allowed_tools ({OPENAI_HOST}); {host or base!r} is not known to"
        )
        raise ValueError(msg)


def check_no_digest(mode: str, tail: Sequence[Any]) -> None:
    """Refuse `--digest-turns` with a mode that discloses tools in earlier tool results (the
    digest leaves those out; `TurnDigestMiddleware` would stop at the first call)."""
    from attention_scoping.history import TurnDigestMiddleware

    if mode in ("anthropic", "openai") and any(isinstance(m, TurnDigestMiddleware) for m in tail):
        msg = (
            f"disclosure={mode!r} discloses tools in earlier tool results: run it without "
            "--digest-turns"
        )
        raise ValueError(msg)


def disclosure_builder(kind: str, mode: str) -> Builder:
    """A builder of `scoped` (kind "scoped") or `gated` (kind "gated") with `disclosure=mode`."""
    # scoped's OpenAI() is allowed_tools: the endpoint must enforce it, no tool result discloses
    sent = "allowed_tools" if (kind, mode) == ("scoped", "openai") else mode

    def build(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
        """The strategy's middleware with the provider-native disclosure mode."""
        extra = disclosure_options(kind, mode, model)
        try:
            check_endpoint_mode(sent, model, options)
        except ValueError as exc:
            raise _unavailable(mode, str(exc)) from exc
        check_no_digest(sent, tail)
        first = _scoping(suite, **extra) if kind == "scoped" else _gate(suite, options, **extra)
        return create_eval_agent(model, suite.tools, suite.system_prompt, [first, *tail])

    return build


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
for _suffix, _mode in SCOPED_DISCLOSURE_MODES.items():
    register_strategy(
        f"scoped-{_suffix}",
        disclosure_builder("scoped", _mode),
        f"scopes + load_context, disclosure={'Anthropic' if _mode == 'anthropic' else 'OpenAI'}()"
        " (fixed tools array)",
        needs_scopes=True,
    )
for _suffix, _mode in DISCLOSURE_STRATEGY_MODES.items():
    register_strategy(
        f"gated-{_suffix}",
        disclosure_builder("gated", _mode),
        f"intent gate over every tool, disclosure={_mode!r} (fixed tools array and prompt)",
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
