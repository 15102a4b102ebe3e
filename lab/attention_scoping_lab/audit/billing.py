"""Billed input of a projected session for the audited tools, per method and price model.

The audit knows what each method sends per call but not the user's conversations, so the
session is a projection with stated assumptions: `calls` model calls, two per user turn (4 s
apart, 60 s between turns), each adding `CONVERSATION_PER_CALL` tokens of messages (a tool call
and its result); scoped agents switch scope every `CALLS_PER_SCOPE` calls, cycling through the
scopes; the gate picks a different set per call (or per turn); the gateway appends a search
result and a schema per call, and with its signature pool only a schema for tools whose line
cannot show an argument. Every request is billed on the simulated prompt cache of
`cost` in provider order (tools -> system -> messages). `simulate --sessions` measures
the same on real multi-turn sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from attention_scoping_lab.cost import PRICE_MODELS, Block, assemble, session_cost

if TYPE_CHECKING:  # figures.audit() calls project_bills: no import cycle at run time
    from attention_scoping_lab.audit.figures import AuditFigures, MethodFigure

GATEWAY_POOL_METHOD = "gateway + signature pool"
"""The audit's name for `ToolGateway` with `prompt(pool=True)` in a fixed system prompt (its
projection appends a schema only for tools whose signature line cannot show an argument)."""

CONVERSATION_PER_CALL = 600
"""Tokens each call adds to the conversation (the model's tool call and the tool's result)."""

CALLS_PER_SCOPE = 4
"""Calls between two scope switches in the projection."""

CALLS_PER_TURN = 2

Fixed = Callable[[int], tuple[tuple[str, int], tuple[str, int], int]]
"""Call index -> ((tools id, tokens), (system id, tokens), extra conversation tokens)."""


def _clock(i: int) -> float:
    return (i // CALLS_PER_TURN) * 64.0 + (i % CALLS_PER_TURN) * 4.0


def _bill(pattern: Fixed, calls: int) -> dict[str, float]:
    requests = []
    messages: list[Block] = []
    for i in range(calls):
        (tools_id, tools), (system_id, system), extra = pattern(i)
        messages.append(Block("message", f"m{i}", CONVERSATION_PER_CALL + extra))
        fixed = [Block("tool", tools_id, tools), Block("system", system_id, system)]
        blocks = [b for b in fixed if b.tokens] + messages
        requests.append((assemble(blocks), _clock(i)))
    return {name: session_cost(requests, price).billed for name, price in PRICE_MODELS.items()}


def _pattern(method: MethodFigure, figures: AuditFigures) -> Fixed | None:
    tools, prompt = round(method.tool_tokens_per_call), round(method.prompt_tokens_per_call)
    if method.name.startswith("eager"):
        return lambda i: (("eager", tools), ("system", 0), 0)
    if method.name.startswith("scoped") and figures.scopes:
        scopes = figures.scopes

        def scoped(i: int) -> tuple[tuple[str, int], tuple[str, int], int]:
            s = scopes[(i // CALLS_PER_SCOPE) % len(scopes)]
            return (f"tools:{s.name}", s.tool_tokens), (f"prompt:{s.name}", s.prompt_tokens), 0

        return scoped
    if method.name.startswith("gated"):
        return lambda i: ((f"gate:{i}", tools), ("pool", prompt), 0)
    return None


def _per_turn(method: MethodFigure) -> Fixed:
    """The gate deciding once per user turn: the tools array changes once per turn."""
    tools, pool = round(method.tool_tokens_per_call), round(method.prompt_tokens_per_call)
    return lambda i: ((f"gate:{i // CALLS_PER_TURN}", tools), ("pool", pool), 0)


def pool_fetch_tokens(costs: dict[str, float]) -> float:
    """Tokens the signature pool's set-up appends per tool use (`gateway_costs`): a schema for
    the listed tools (the declared reads, `pool_listed` of the catalog) whose line cannot show
    an argument, and a search result and a schema for every tool the pool does not name."""
    listed = costs.get("pool_listed", 0.0)
    search, schema = costs.get("search_tokens", 0.0), costs.get("schema_tokens", 0.0)
    return listed * schema * costs.get("incomplete_signatures", 0.0) + (1 - listed) * (
        search + schema
    )


def _gateway_pattern(method: MethodFigure, figures: AuditFigures) -> Fixed | None:
    """The gateway appends a search result and a schema per call; with the signature pool
    `pool_fetch_tokens` (only a schema for a listed tool whose line cannot show an argument)."""
    if not method.name.startswith("gateway"):
        return None
    tools, prompt = round(method.tool_tokens_per_call), round(method.prompt_tokens_per_call)
    costs = figures.gateway_fetch_tokens
    if method.name == GATEWAY_POOL_METHOD:
        fetch = round(pool_fetch_tokens(costs))
    else:
        fetch = round(sum(costs.get(k, 0) for k in ("search_tokens", "schema_tokens")))
    return lambda i: (("gateway", tools), (f"prompt:{method.name}", prompt), fetch)


def project_bills(figures: AuditFigures) -> dict[str, dict[str, float]]:
    """Method name -> price model -> billed input-token equivalents of the projected session
    (`figures.turns` calls); the gate also decided once per turn (`decide_per="turn"`)."""
    out: dict[str, dict[str, float]] = {}
    for method in figures.methods:
        pattern = _pattern(method, figures) or _gateway_pattern(method, figures)
        if pattern is None:
            continue
        out[method.name] = _bill(pattern, figures.turns)
        if method.name.startswith("gated"):
            out[f"{method.name}, decided per turn"] = _bill(_per_turn(method), figures.turns)
    return out
