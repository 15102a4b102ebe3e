"""The billed-cost benchmark (`attention-scoping simulate --sessions N`): every strategy plays
the same seeded multi-turn sessions; each model call is billed on a simulated provider prompt
cache under every price model; figures per strategy and the cumulative cost per turn."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from attention_scoping.common.tokens import TokenCounter, get_counter
from attention_scoping_lab.cost import PRICE_MODELS, PriceModel, memo_count
from attention_scoping_lab.display import write_figures_json
from attention_scoping_lab.simulate.catalog import build_catalog
from attention_scoping_lab.simulate.conversation import CallRecord, Conversation
from attention_scoping_lab.simulate.native_strategies import native_strategies
from attention_scoping_lab.simulate.session_strategies import (
    ConversationOnly,
    Eager,
    GateDeferral,
    Gateway,
    GatewaySignatures,
    GatewayWithPool,
    GrowOnlyGate,
    LazyDeferral,
    NativeToolSearch,
    PerCallGate,
    Scoping,
    ScopingDeferral,
    SessionStrategy,
    TurnGate,
    exposure_share,
)
from attention_scoping_lab.simulate.sessions import TURN_GAP_SECONDS, Session, build_sessions

RECOMMENDED = "gateway_signatures"
"""The strategy docs/cost.md recommends (reported again under the name `recommended`): the
cheapest configuration of shipped parts measured at full needed-tool exposure (`ToolGateway`
with its signature pool, `gateway.prompt(pool=True)`, in a fixed system prompt)."""

GROW_BUDGET = 8000
"""Schema tokens the grow-only tools array may reach before its reset (about 20 tools)."""


class UnknownStrategyError(ValueError):
    """A strategy name that is not one of the benchmark's (the message names the valid ones)."""


LATER_HIT = 0.9
"""A later call of a turn counts as cached when at least this share of its input is read."""


@dataclass
class StrategyBill:
    """One strategy's figures over all sessions, per price model."""

    name: str
    description: str
    billed_per_task: dict[str, float]
    input_tokens_per_task: float
    hit_ratio: dict[str, float]
    later_hit_share: dict[str, float]
    """Share of the calls after the first of a turn that read >= 90 % of their input."""
    prefix_reuse: dict[str, float]
    """Share of the calls after the first of a turn that read back everything the previous
    call sent (nothing re-billed: only new tokens are written)."""
    exposure: float
    exposed_at_once: float
    calls_per_turn: float
    curve: dict[str, list[float]]
    """Mean cumulative billed input after turn 1, 2, ..., T."""
    counters: dict[str, int] = field(default_factory=dict)
    output_tokens_per_task: float = 0.0
    """Tokens the model generated per session (every call's reply)."""
    billed_total_per_task: dict[str, float] = field(default_factory=dict)
    """Billed input plus output at the price model's output price, per session."""
    calls_per_task: float = 0.0


@dataclass
class SessionBenchmark:
    """Everything `simulate --sessions` reports."""

    seed: int
    n_sessions: int
    turns: int
    tokenizer: str
    price: PriceModel
    prices: list[PriceModel]
    turn_gap_s: float
    strategies: list[StrategyBill]
    misfire: float = 0.0
    """Share of `gateway_signatures`' direct calls refused for their arguments."""

    def strategy(self, name: str) -> StrategyBill:
        """The figures of `name` (`recommended` resolves to `RECOMMENDED`)."""
        wanted = RECOMMENDED if name == "recommended" else name
        return next(s for s in self.strategies if s.name == wanted)

    def as_dict(self) -> dict[str, Any]:
        """The JSON figures: the issue's shape, plus curves and the other price models."""
        p = self.price.name
        eager = self.strategy("eager").billed_per_task[p]
        out: dict[str, Any] = {}
        for s in self.strategies:
            out[s.name] = {
                "billed_input_per_task": round(s.billed_per_task[p], 1),
                "input_tokens_per_task": round(s.input_tokens_per_task, 1),
                "cache_hit_ratio": round(s.hit_ratio[p], 4),
                "exposure": round(s.exposure, 4),
                "exposed_at_once": round(s.exposed_at_once, 4),
                "billed_vs_eager": round(s.billed_per_task[p] / eager, 4) if eager else None,
                "later_calls_cached": round(s.later_hit_share[p], 4),
                "later_calls_reusing_whole_prefix": round(s.prefix_reuse[p], 4),
                "calls_per_turn": round(s.calls_per_turn, 3),
                "cumulative_billed_by_turn": [round(v, 1) for v in s.curve[p]],
                "cumulative_billed_by_turn_by_price_model": {
                    k: [round(v, 1) for v in curve] for k, curve in s.curve.items()
                },
                "billed_by_price_model": {k: round(v, 1) for k, v in s.billed_per_task.items()},
                "calls_per_task": round(s.calls_per_task, 2),
                "output_tokens_per_task": round(s.output_tokens_per_task, 1),
                "billed_with_output_by_price_model": {
                    k: round(v, 1) for k, v in s.billed_total_per_task.items()
                },
                "counters_per_task": {
                    k: round(v / self.n_sessions, 2) for k, v in sorted(s.counters.items())
                },
                "description": s.description,
            }
        if RECOMMENDED in out:
            out["recommended"] = {**out[RECOMMENDED], "strategy": RECOMMENDED}
        return {
            "price_model": p,
            "n_sessions": self.n_sessions,
            "turns": self.turns,
            "seed": self.seed,
            "tokenizer": self.tokenizer,
            "turn_gap_s": self.turn_gap_s,
            "misfire": self.misfire,
            "price": {
                "cache_read": self.price.cache_read,
                "cache_write": self.price.cache_write,
                "ttl_s": self.price.ttl_s,
                "min_cacheable": self.price.min_cacheable,
            },
            "strategies": out,
        }


def _bill(
    strategy: SessionStrategy,
    records: Sequence[list[CallRecord]],
    turns: int,
    prices: Sequence[PriceModel],
) -> StrategyBill:
    calls = [c for session in records for c in session]
    names = [p.name for p in prices]
    billed = {
        n: statistics.fmean(sum(c.costs[n].billed for c in s) for s in records) for n in names
    }
    raw = statistics.fmean(sum(c.costs[names[0]].input_tokens for c in s) for s in records)
    hit: dict[str, float] = {}
    later: dict[str, float] = {}
    curve: dict[str, list[float]] = {}
    later_calls = [c for c in calls if not c.first_of_turn]
    pairs = [(prev, c) for s in records for prev, c in pairwise(s) if not c.first_of_turn]
    reuse: dict[str, float] = {}
    for n in names:
        total = sum(c.costs[n].input_tokens for c in calls)
        hit[n] = sum(c.costs[n].cache_read_tokens for c in calls) / total if total else 0.0
        good = sum(1 for c in later_calls if c.costs[n].hit_ratio >= LATER_HIT)
        later[n] = good / len(later_calls) if later_calls else 1.0
        kept = sum(1 for p, c in pairs if c.costs[n].cache_read_tokens >= p.costs[n].input_tokens)
        reuse[n] = kept / len(pairs) if pairs else 1.0
        per_turn = [[0.0] * turns for _ in records]
        for i, session in enumerate(records):
            for c in session:
                per_turn[i][c.turn] += c.costs[n].billed
        curve[n] = [statistics.fmean(sum(row[: t + 1]) for row in per_turn) for t in range(turns)]
    needed = strategy.exposure["needed"]
    output = statistics.fmean(sum(c.output_tokens for c in s) for s in records)
    by_name = {p.name: p for p in prices}
    with_output = {n: billed[n] + by_name[n].billed_output(output) for n in names}
    return StrategyBill(
        name=strategy.name,
        description=strategy.description,
        billed_per_task=billed,
        input_tokens_per_task=raw,
        hit_ratio=hit,
        later_hit_share=later,
        prefix_reuse=reuse,
        exposure=exposure_share(strategy.exposure),
        exposed_at_once=strategy.exposure["at once"] / needed if needed else 1.0,
        calls_per_turn=len(calls) / (turns * len(records)),
        curve=curve,
        counters={**strategy.counters, **{f"tools {k}": v for k, v in strategy.exposure.items()}},
        output_tokens_per_task=output,
        billed_total_per_task=with_output,
        calls_per_task=len(calls) / len(records),
    )


def build_strategies(
    specs: Sequence[Any],
    counter: TokenCounter,
    ranker: Any,
    cache: Any,
    progress: Callable[[str, int, int], None] | None = None,
    *,
    misfire: float = 0.0,
) -> list[SessionStrategy]:
    """Every strategy, the gate ones sharing one gate fitted on the catalog (the provider-native
    disclosure modes last); `misfire` is the share of `gateway_signatures`' direct calls whose
    arguments the gateway refuses."""
    from attention_scoping.gateway.tools import ToolGateway
    from attention_scoping.gating import CatalogRanker, ToolAttentionMiddleware
    from attention_scoping_lab.audit.figures import stub_tool
    from attention_scoping_lab.bench.vectors import warm_vectors

    gate = ToolAttentionMiddleware(
        ranker=ranker,
        preconditions={s.name: s.preconditions for s in specs if s.preconditions},
        cache=cache,
        emit_events=False,
    )
    gate.index.fit_catalog(list(specs))
    warm_vectors(gate.index.ranker, specs, progress)
    searching = ToolGateway([stub_tool(s) for s in specs], ranker=CatalogRanker(ranker))
    return [
        ConversationOnly(specs),
        Eager(specs),
        Scoping(specs),
        Scoping(specs, module_in_messages=True),
        ScopingDeferral(specs),
        PerCallGate(specs, gate),
        TurnGate(specs, gate),
        GrowOnlyGate(specs, gate, budget=GROW_BUDGET, count=counter.count),
        Gateway(specs, searching),
        GatewayWithPool(specs, searching),
        GatewaySignatures(specs, searching, misfire=misfire),
        NativeToolSearch(specs, searching),
        GateDeferral(specs, gate),
        LazyDeferral(specs, gate),
        *native_strategies(specs, gate),
    ]


def run_sessions(
    *,
    price: PriceModel,
    seed: int = 0,
    n_sessions: int = 20,
    turns: int = 10,
    counter: TokenCounter | None = None,
    ranker: Any = "default",
    cache: Any = None,
    turn_gap_s: float = TURN_GAP_SECONDS,
    misfire: float = 0.0,
    progress: Callable[[str, int, int], None] | None = None,
    only: Collection[str] | None = None,
) -> SessionBenchmark:
    """Play every strategy over `n_sessions` seeded sessions of `turns` user turns and bill
    every call under `price` and the other named price models (`misfire`: see
    `build_strategies`; `only`: play just these strategies, eager always included as the
    reference).

    Raises:
        UnknownStrategyError: a name in `only` that is no strategy.
    """
    c = counter or get_counter()
    count = memo_count(c.count)
    specs = build_catalog(seed, c)
    sessions = build_sessions(seed, n_sessions, turns)
    prices = [price, *(p for n, p in PRICE_MODELS.items() if n != price.name)]
    bills = []
    strategies = build_strategies(specs, c, ranker, cache, progress, misfire=misfire)
    unknown = sorted(set(only or ()) - {s.name for s in strategies})
    if unknown:
        valid = ", ".join(s.name for s in strategies)
        msg = f"unknown strategy {unknown[0]!r}; valid: {valid}"
        raise UnknownStrategyError(msg)
    for strategy in strategies:
        if only is not None and strategy.name not in {*only, "eager"}:
            continue
        bills.append(
            bill_sessions(
                strategy, sessions, prices, count, turn_gap_s=turn_gap_s, progress=progress
            )
        )
    return SessionBenchmark(
        seed, n_sessions, turns, c.label, price, prices, turn_gap_s, bills, misfire
    )


def bill_sessions(
    strategy: SessionStrategy,
    sessions: Sequence[Session],
    prices: Sequence[PriceModel],
    count: Callable[[str], int],
    *,
    turn_gap_s: float = TURN_GAP_SECONDS,
    progress: Callable[[str, int, int], None] | None = None,
) -> StrategyBill:
    """Play `strategy` over `sessions` (each of the same number of turns) and bill every call
    under `prices` (the first is the headline price model); `count` counts a text's tokens."""
    records = []
    for i, session in enumerate(sessions):
        conv = Conversation(prices, count, turn_gap_s=turn_gap_s)
        strategy.play(session, conv)
        records.append(conv.calls)
        if progress is not None:
            progress(f"sessions: {strategy.name}", i + 1, len(sessions))
    turns = max((len(s.turns) for s in sessions), default=0)
    return _bill(strategy, records, turns, prices)


def write_json(result: SessionBenchmark, path: str | Path) -> None:
    """Write the figures as JSON."""
    write_figures_json(result, path)
