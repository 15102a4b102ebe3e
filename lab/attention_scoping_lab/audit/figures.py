"""The audit's figures: what a tool set costs per model call, and what scoping, gating and the
gateway would send instead, over a session, with how much of each prompt a cache can keep.

Every count is of the exact text a provider receives (the tools array as OpenAI function JSON,
the system prompt layers, the summary pool), with a real BPE tokenizer.
"""

from __future__ import annotations

import json
import logging
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from attention_scoping.common.tokens import TokenCounter, get_counter
from attention_scoping.common.tool import ToolSpec
from attention_scoping.observe.tax import shared_prefix_tokens, tools_json
from attention_scoping.prompt import Layout
from attention_scoping_lab.audit.billing import GATEWAY_POOL_METHOD, pool_fetch_tokens
from attention_scoping_lab.audit.target import AuditTarget

logger = logging.getLogger(__name__)

FALLBACK_K = 5
"""Gate k used when the gating package cannot be imported (its shipped default)."""

FALLBACK_POOL_BUDGET = 1000
"""Summary-pool budget used when the gating package cannot be imported (its default)."""


@dataclass
class ScopeFigure:
    """One scope: its tools and what a call in it carries."""

    name: str
    n_tools: int
    tool_tokens: int
    """Tools array in this scope: its tools, the always-on ones and `load_context`."""
    prompt_tokens: int
    """The three-layer system prompt in this scope."""


@dataclass
class MethodFigure:
    """What one way of exposing tools sends per model call, and over a session."""

    name: str
    tools_per_call: float
    tool_tokens_per_call: float
    prompt_tokens_per_call: float
    session_tokens: float
    cacheable_share: float
    """Share of the request (tools array, then system prompt: provider order) identical from
    one call to the next."""
    note: str = ""


@dataclass
class AuditFigures:
    """Everything `audit` reports (also the `--json` document)."""

    target: str
    tokenizer: str
    n_tools: int
    eager_tokens_per_call: int
    mean_tool_tokens: float
    median_tool_tokens: float
    heaviest: list[dict[str, Any]]
    turns: int
    k: int
    scope_source: str = ""
    scopes: list[ScopeFigure] = field(default_factory=list)
    methods: list[MethodFigure] = field(default_factory=list)
    gateway_fetch_tokens: dict[str, float] = field(default_factory=dict)
    suggested_scopes: list[dict[str, Any]] = field(default_factory=list)
    suggestion_method: str = ""
    notes: list[str] = field(default_factory=list)
    billed_per_session: dict[str, dict[str, float]] = field(default_factory=dict)
    """Method -> price model -> billed input-token equivalents of the projected session
    (`audit.billing`)."""
    unclassified: list[str] = field(default_factory=list)
    """Tools nobody declared a read or a write (`AuditTarget.unclassified`): code never
    opens them."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able figures."""
        return asdict(self)


def _array_tokens(schemas: Sequence[dict[str, Any]], counter: TokenCounter) -> int:
    return counter.count(tools_json(schemas)) if schemas else 0


def _gate_defaults() -> tuple[int, int, str]:
    try:
        from attention_scoping.gating.middleware import DEFAULT_K, DEFAULT_POOL_BUDGET
    except ImportError as exc:
        return FALLBACK_K, FALLBACK_POOL_BUDGET, f"gating package unavailable ({exc})"
    return DEFAULT_K, DEFAULT_POOL_BUDGET, ""


def _pool_text(specs: Sequence[ToolSpec]) -> str:
    from attention_scoping.gating.disclosure import pool_text

    return pool_text([(s.name, s.summary) for s in specs])


def stub_tool(spec: ToolSpec) -> BaseTool:
    """A tool with `spec`'s schema that does nothing (the gateway needs tool objects)."""

    def run(**kwargs: Any) -> str:
        return ""

    return StructuredTool.from_function(
        run, name=spec.name, description=spec.description, args_schema=spec.parameters
    )


def gateway_costs(specs: Sequence[ToolSpec], counter: TokenCounter) -> dict[str, float]:
    """Tokens of the gateway: its three tools, its prompt, and per tool use the search result
    and the schema payload the model fetches (means over a sample of tools)."""
    from attention_scoping.common.errors import render_payload
    from attention_scoping.gateway.tools import GATEWAY_PROMPT, ToolGateway

    out: dict[str, float] = {"prompt_tokens": counter.count(GATEWAY_PROMPT)}
    sample = list(specs[:: max(1, len(specs) // 40)])[:40]
    try:
        gateway = ToolGateway([stub_tool(s) for s in specs])
    except Exception as exc:  # an unusual schema the gateway rejects: price the tools only
        logger.debug("gateway over the catalog failed: %s", exc)
        out["tools_tokens"] = _array_tokens(
            [t for t in (_tool_schema(x) for x in ToolGateway([]).tools)], counter
        )
        out["search_tokens"] = 0.0
        out["schema_tokens"] = statistics.fmean(
            counter.count(json.dumps(s.provider_schema()["function"], ensure_ascii=False))
            for s in sample
        )
        return out
    out["tools_tokens"] = _array_tokens([_tool_schema(t) for t in gateway.tools], counter)
    out["pool_prompt_tokens"] = counter.count(gateway.prompt(pool=True))
    listed = [s for s in specs if s.name in gateway.reads]  # the pool names declared reads only
    out["pool_listed"] = len(listed) / len(specs)
    out["incomplete_signatures"] = (
        sum(not s.signature_complete for s in listed) / len(listed) if listed else 0.0
    )
    out["search_tokens"] = statistics.fmean(
        counter.count(render_payload(gateway.search(s.summary or s.name))) for s in sample
    )
    out["schema_tokens"] = statistics.fmean(
        counter.count(render_payload(gateway.schema([s.name]))) for s in sample
    )
    return out


def _tool_schema(tool: BaseTool) -> dict[str, Any]:
    from attention_scoping.adapters.tools import to_provider_schema

    return to_provider_schema(tool)


def _request(prompt: str, schemas: Sequence[dict[str, Any]]) -> str:
    """A request's fixed part in provider order (tools array, then system prompt): what a
    prompt cache matches, so a change in the tools array breaks the system prompt too."""
    return tools_json(schemas) + "\n" + prompt


def _share(first: str, second: str, counter: TokenCounter) -> float:
    total = counter.count(second)
    return shared_prefix_tokens(first, second, counter) / total if total else 1.0


def audit(
    target: AuditTarget,
    *,
    counter: TokenCounter | None = None,
    turns: int = 20,
    k: int | None = None,
    top: int = 10,
    suggest: int | None = None,
    embeddings: bool = True,
    progress: Any = None,
) -> AuditFigures:
    """Compute the audit figures of `target`.

    Args:
        target: The tool set (see `load_target`).
        counter: Tokenizer (default o200k_base).
        turns: Model calls in the session projection.
        k: Tools the gate promotes per call (default: the gate's).
        top: How many of the heaviest tools to list.
        suggest: Number of suggested scopes (None: about one per 10 tools when the target has
            no scopes; 0: none).
        embeddings: Cluster suggested scopes on the gate's sentence embeddings when available
            (False: TF-IDF vectors only).
        progress: `progress(description, done, total)` for embedding (suggested scopes).
    """
    c = counter or get_counter()
    specs = target.specs
    schemas = {s.name: s.provider_schema() for s in specs}
    each = {s.name: c.count(json.dumps(schemas[s.name], ensure_ascii=False)) for s in specs}
    eager = _array_tokens(list(schemas.values()), c)
    gate_k, pool_budget, gate_note = _gate_defaults()
    k = k or gate_k
    ranked = sorted(specs, key=lambda s: -each[s.name])
    figures = AuditFigures(
        target=target.label,
        tokenizer=c.label,
        n_tools=len(specs),
        eager_tokens_per_call=eager,
        mean_tool_tokens=statistics.fmean(each.values()),
        median_tool_tokens=statistics.median(each.values()),
        heaviest=[
            {"id": s.id, "name": s.name, "tokens": each[s.name], "share": each[s.name] / eager}
            for s in ranked[:top]
        ],
        turns=turns,
        k=k,
        notes=list(target.notes),
        unclassified=list(target.unclassified),
    )
    if gate_note:
        figures.notes.append(gate_note)

    # eager: every schema on every call; identical from call to call
    figures.methods.append(
        MethodFigure("eager (all tools)", len(specs), eager, 0, eager * turns, 1.0)
    )
    if target.scopes:
        _scoping(target, schemas, figures, c)
    _gating(specs, schemas, each, ranked, k, pool_budget, figures, c)
    _gateway(specs, figures, c)
    from attention_scoping_lab.audit.billing import project_bills

    figures.billed_per_session = project_bills(figures)

    count = (
        suggest if suggest is not None else (0 if target.scopes else max(2, round(len(specs) / 10)))
    )
    if count and len(specs) >= 4:
        try:
            from attention_scoping_lab.audit.clusters import suggest_scopes
        except ImportError as exc:
            figures.notes.append(f"suggested scopes need numpy ({exc})")
            return figures
        groups, how = suggest_scopes(
            specs, min(count, len(specs) // 2), embeddings=embeddings, progress=progress
        )
        figures.suggestion_method = how
        for name, names in groups:
            figures.suggested_scopes.append(
                {
                    "name": name,
                    "tools": names,
                    "tokens": _array_tokens([schemas[n] for n in names], c),
                }
            )
    return figures


def _scoping(
    target: AuditTarget,
    schemas: dict[str, dict[str, Any]],
    figures: AuditFigures,
    c: TokenCounter,
) -> None:
    """The scoped figures: per scope, what a call carries once the scope is open to all its
    tools (the model's `load_context` or the application opened it), under the default
    (compact) layout."""
    from attention_scoping.adapters.tools import to_provider_schema
    from attention_scoping.load_context import make_load_context_tool
    from attention_scoping.prompt import build_layers
    from attention_scoping.scopes import Scope, ScopeCatalog

    assert target.scopes is not None
    scopes = [
        Scope(
            name,
            target.descriptions.get(name, ""),
            tools=names,
            prompt=target.prompts.get(name, ""),
            reads=[n for n in names if n in target.reads],
        )
        for name, names in target.scopes.items()
    ]
    catalog = ScopeCatalog(scopes, always_on=target.always_on)
    layout: Layout = "compact"
    load_context = to_provider_schema(make_load_context_tool(catalog, layout))
    figures.scope_source = target.scope_source
    requests: list[str] = []
    per_scope: list[ScopeFigure] = []
    for name, names in target.scopes.items():
        visible = [n for n in catalog.visible(name) if n in schemas]
        sent = [load_context] + [
            schemas[n] for n in dict.fromkeys([*names, *visible]) if n in schemas
        ]
        sent += [schemas[n] for n in target.always_on if n in schemas and n not in names]
        layers = build_layers(catalog, name, layout, None)
        prompt = layers.render()
        per_scope.append(ScopeFigure(name, len(names), _array_tokens(sent, c), c.count(prompt)))
        requests.append(_request(prompt, sent))
    figures.scopes = per_scope
    if len(per_scope) > 30:
        index = c.count(build_layers(catalog, None, layout, None).index)
        lines = (
            f" and the capability index has a line per scope ({index:,} tokens)" if index else ""
        )
        figures.notes.append(
            f"{len(per_scope):,} scopes: load_context lists every scope name "
            f"({_array_tokens([load_context], c):,} tokens){lines}, on every call; fewer, larger "
            "scopes are cheaper (see --suggest)"
        )
    tools_mean = statistics.fmean(s.tool_tokens for s in per_scope)
    prompt_mean = statistics.fmean(s.prompt_tokens for s in per_scope)
    shares = [_share(a, b, c) for a, b in pairwise(requests)] or [1.0]
    figures.methods.append(
        MethodFigure(
            f"scoped ({len(per_scope)} scopes, mean)",
            statistics.fmean(s.n_tools for s in per_scope) + 1,
            tools_mean,
            prompt_mean,
            (tools_mean + prompt_mean) * figures.turns,
            statistics.fmean(shares),
            note=(
                f"largest scope {max(s.tool_tokens for s in per_scope):,} tokens; a switch of "
                "scope costs one extra model call (load_context)"
            ),
        )
    )


def _gating(
    specs: Sequence[ToolSpec],
    schemas: dict[str, dict[str, Any]],
    each: dict[str, int],
    ranked: Sequence[ToolSpec],
    k: int,
    pool_budget: int,
    figures: AuditFigures,
    c: TokenCounter,
) -> None:
    try:
        pool = _pool_text(specs)
    except ImportError as exc:
        figures.notes.append(f"gating figures need the 'gate' extra ({exc})")
        return
    pool_tokens = c.count(pool)
    pool_sent = len(specs) > k and pool_tokens <= pool_budget
    typical = k * figures.mean_tool_tokens if len(specs) > k else figures.eager_tokens_per_call
    worst = _array_tokens([schemas[s.name] for s in ranked[:k]], c)
    prompt = pool if pool_sent else ""
    first = [schemas[s.name] for s in specs[:k]]
    second = [schemas[s.name] for s in specs[k : 2 * k]] or first
    share = _share(_request(prompt, first), _request(prompt, second), c)
    figures.methods.append(
        MethodFigure(
            f"gated (k={k})",
            min(k, len(specs)),
            typical,
            pool_tokens if pool_sent else 0,
            (typical + (pool_tokens if pool_sent else 0)) * figures.turns,
            share,
            note=(
                f"k x mean tool; the {k} heaviest: {worst:,}. Summary pool of all tools: "
                f"{pool_tokens:,} tokens, "
                + (
                    f"sent (within the {pool_budget:,}-token budget)"
                    if pool_sent
                    else "not needed (every tool fits within k)"
                    if len(specs) <= k
                    else f"not sent (over the {pool_budget:,}-token budget)"
                )
            ),
        )
    )


def _gateway(specs: Sequence[ToolSpec], figures: AuditFigures, c: TokenCounter) -> None:
    costs = gateway_costs(specs, c)
    figures.gateway_fetch_tokens = costs
    fetch = costs["search_tokens"] + costs["schema_tokens"]
    figures.methods.append(
        MethodFigure(
            "gateway (3 tools)",
            3,
            costs["tools_tokens"],
            costs["prompt_tokens"],
            (costs["tools_tokens"] + costs["prompt_tokens"]) * figures.turns
            + fetch * figures.turns,
            1.0,
            note=(
                f"plus per tool use a search result (~{costs['search_tokens']:,.0f}) and a "
                f"schema payload (~{costs['schema_tokens']:,.0f}) in the history; the session "
                "figure assumes one tool use per call, each fetched once"
            ),
        )
    )
    if "pool_prompt_tokens" not in costs:
        return
    listed = costs["pool_listed"]
    fetched = pool_fetch_tokens(costs)
    figures.methods.append(
        MethodFigure(
            GATEWAY_POOL_METHOD,
            3,
            costs["tools_tokens"],
            costs["pool_prompt_tokens"],
            (costs["tools_tokens"] + costs["pool_prompt_tokens"] + fetched) * figures.turns,
            1.0,
            note=(
                "gateway.prompt(pool=True) in a fixed system prompt: the signature line of "
                f"each declared read ({listed:.0%} of the tools), so the model calls "
                "execute_tool at once on those (a schema fetched only for the "
                f"{costs['incomplete_signatures']:.0%} of them with a {{…}} argument); any "
                "other tool is searched for and its schema fetched, as without the pool"
            ),
        )
    )
